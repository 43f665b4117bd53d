// What every sample app computes with the package, as a new user's app would (copied into each app's src/ by
// apps.test.mjs): the full and the lite entry, a data key, a profile's deployment calldata and its predicted addresses,
// and a typed error. The test compares the answers with erc725.js and viem.
import * as full from 'profile-relayer';
import * as lite from 'profile-relayer/lite';

export function probe() {
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
  return {
    key: full.encodeKeyName('LSP3Profile'),
    liteKey: lite.encodeKeyName('LSP5ReceivedAssets[]'),
    salt,
    postDeploymentCallData,
    universalProfile: predicted.universalProfile,
    keyManager: predicted.keyManager,
    error,
    clients: typeof full.RelayerClient,
  };
}
