-- The graph (worker/src/search/store/graph.rs): relations the indexer reads from chain, one row per fact, per chain.
-- Addresses are lower-case hex, token ids bytes32 hex ('' for an LSP7 asset's own rows), amounts decimal text (exact
-- beyond 2^53; never floats). `block` is the block of the event that made the indexer read the row; a reorganization
-- past it re-reads the row (graph_rechecks, or the record's re-check). Events only say what to re-read: every value
-- here is what the chain answered at the time of the read (balanceOf, tokenOwnerOf, isFollowing, the arrays).

-- assets: the scalars of every indexed LSP7 / LSP8 contract (the names and ints of its data keys, its calls)
CREATE TABLE IF NOT EXISTS graph_assets (chain_id INTEGER NOT NULL, id TEXT NOT NULL, standard TEXT NOT NULL,
  lsp4_token_name TEXT, lsp4_token_symbol TEXT, lsp4_token_type INTEGER, lsp8_token_id_format INTEGER,
  decimals INTEGER, total_supply TEXT, owner TEXT, created_block INTEGER NOT NULL, block INTEGER NOT NULL,
  PRIMARY KEY (chain_id, id));
CREATE INDEX IF NOT EXISTS graph_assets_owner ON graph_assets (chain_id, owner);

-- tokens: every existing LSP8 token id of an indexed collection (a burned token is removed)
CREATE TABLE IF NOT EXISTS graph_tokens (chain_id INTEGER NOT NULL, asset TEXT NOT NULL, token_id TEXT NOT NULL,
  formatted_token_id TEXT, created_block INTEGER NOT NULL, block INTEGER NOT NULL,
  PRIMARY KEY (chain_id, asset, token_id));

-- holds: an LSP7 balance (token_id '') or the ownership of one LSP8 token ('1'); a position that went to zero is
-- kept with balance '0' (as Envio's are: readers filter; a reorganization finds it to re-read)
CREATE TABLE IF NOT EXISTS graph_holds (chain_id INTEGER NOT NULL, asset TEXT NOT NULL, token_id TEXT NOT NULL,
  holder TEXT NOT NULL, balance TEXT NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (chain_id, asset, token_id, holder));
CREATE INDEX IF NOT EXISTS graph_holds_holder ON graph_holds (chain_id, holder);

-- received (LSP5ReceivedAssets) and issued (LSP12IssuedAssets) assets of a profile, with their map entries
CREATE TABLE IF NOT EXISTS graph_received (chain_id INTEGER NOT NULL, profile TEXT NOT NULL, asset TEXT NOT NULL,
  interface_id TEXT, position INTEGER NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (chain_id, profile, asset));
CREATE INDEX IF NOT EXISTS graph_received_asset ON graph_received (chain_id, asset);
CREATE TABLE IF NOT EXISTS graph_issued (chain_id INTEGER NOT NULL, profile TEXT NOT NULL, asset TEXT NOT NULL,
  interface_id TEXT, position INTEGER NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (chain_id, profile, asset));
CREATE INDEX IF NOT EXISTS graph_issued_asset ON graph_issued (chain_id, asset);

-- creators of an asset (LSP4Creators[] with their LSP4CreatorsMap entry: interface id, index)
CREATE TABLE IF NOT EXISTS graph_creators (chain_id INTEGER NOT NULL, asset TEXT NOT NULL, creator TEXT NOT NULL,
  interface_id TEXT, position INTEGER NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (chain_id, asset, creator));
CREATE INDEX IF NOT EXISTS graph_creators_creator ON graph_creators (chain_id, creator);

-- follows (LSP26): who follows whom now; an unfollow moves the row to graph_unfollows (where a reorganization finds
-- it to re-read), a follow back moves it again
CREATE TABLE IF NOT EXISTS graph_follows (chain_id INTEGER NOT NULL, follower TEXT NOT NULL, followee TEXT NOT NULL,
  block INTEGER NOT NULL, PRIMARY KEY (chain_id, follower, followee));
CREATE INDEX IF NOT EXISTS graph_follows_followee ON graph_follows (chain_id, followee);
CREATE TABLE IF NOT EXISTS graph_unfollows (chain_id INTEGER NOT NULL, follower TEXT NOT NULL,
  followee TEXT NOT NULL, block INTEGER NOT NULL, PRIMARY KEY (chain_id, follower, followee));

-- rows a reorganization may have made stale, to be read again by the next runs ('hold': asset, holder; 'token':
-- asset, token id; 'follow': follower, followee)
CREATE TABLE IF NOT EXISTS graph_rechecks (chain_id INTEGER NOT NULL, kind TEXT NOT NULL, a TEXT NOT NULL,
  b TEXT NOT NULL, PRIMARY KEY (chain_id, kind, a, b));
