// Bundled by tests/e2e/algolia.test.mjs (esbuild) for Chromium: InstantSearch.js with algoliasearch/lite pointed at
// the Worker, a search box, hits with the highlighted name, and a refinement list on `kind`.
import instantsearch from 'instantsearch.js';
import { hits, refinementList, searchBox } from 'instantsearch.js/es/widgets';
import { liteClient } from 'algoliasearch/lite';

const { host, index } = window.ALGOLIA_TEST;
const searchClient = liteClient('TESTAPPID', 'any-search-key', { hosts: [{ url: host, protocol: 'http', accept: 'read' }] });
const search = instantsearch({ indexName: index, searchClient });
search.addWidgets([
  searchBox({ container: '#searchbox' }),
  refinementList({ container: '#kinds', attribute: 'kind' }),
  hits({
    container: '#hits',
    templates: {
      item: (hit, { html, components }) => html`<span class="name">${components.Highlight({ hit, attribute: 'name' })}</span>`,
    },
  }),
]);
search.start();
