// a server component, prerendered at build time
import { probe } from '../src/probe.js';

export default function Page() {
  return <pre id="server">{JSON.stringify(probe())}</pre>;
}
