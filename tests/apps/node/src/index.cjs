// CommonJS: `require` of both entries
const full = require('profile-relayer');
const lite = require('profile-relayer/lite');

const salt = '0x' + '11'.repeat(32);
const lsp3Profile = full.encodeVerifiableUri('{"LSP3Profile":{"name":"app"}}', 'ipfs://QmApp');
const { postDeploymentCallData } = full.profileDataFromControllers(['0xcafecafecafecafecafecafecafecafecafecafe'], lsp3Profile);
const predicted = full.predictProfileAddress({ salt, postDeploymentCallData, network: 'mainnet' });
let error;
try {
  lite.decodeVerifiableUri('0x00');
} catch (e) {
  error = { isError: e instanceof Error, name: e.name, code: e.code };
}
console.log(
  JSON.stringify({
    key: full.encodeKeyName('LSP3Profile'),
    liteKey: lite.encodeKeyName('LSP5ReceivedAssets[]'),
    salt,
    postDeploymentCallData,
    universalProfile: predicted.universalProfile,
    keyManager: predicted.keyManager,
    error,
    clients: typeof full.RelayerClient,
  }),
);
