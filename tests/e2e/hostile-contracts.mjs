// Hostile contracts for the indexer tests, hand-assembled (no compiler): each runtime emits `DataChanged` (LOG1)
// when called with empty calldata — that is how the indexer discovers it — and answers every other call with
// its hostile behaviour. Installed with anvil_setCode; the opcode listings below are the whole source.
import { keccak256, toHex } from 'viem';

const OP = {
  STOP: 0x00,
  EQ: 0x14,
  SHR: 0x1c,
  CALLDATALOAD: 0x35,
  CALLDATASIZE: 0x36,
  MSTORE: 0x52,
  MSTORE8: 0x53,
  JUMPI: 0x57,
  JUMPDEST: 0x5b,
  LOG1: 0xa1,
  RETURN: 0xf3,
  REVERT: 0xfd,
};

/**
 * A two-pass assembler: items are opcode names, `['push', hex]` (PUSH1…PUSH32 chosen by length),
 * `['label', name]` (a JUMPDEST) and `['to', name]` (PUSH1 of a label's offset; programs stay under 256 bytes).
 */
export function assemble(items) {
  const labels = {};
  const emit = (resolve) => {
    const out = [];
    for (const item of items) {
      if (typeof item === 'string') out.push(OP[item]);
      else if (item[0] === 'push') {
        const bytes = Buffer.from(item[1].replace(/^0x/, '').padStart(2, '0'), 'hex');
        out.push(0x5f + bytes.length, ...bytes);
      } else if (item[0] === 'label') {
        labels[item[1]] = out.length;
        out.push(OP.JUMPDEST);
      } else if (item[0] === 'to') out.push(0x60, resolve ? labels[item[1]] : 0);
    }
    return out;
  };
  emit(false);
  const code = emit(true);
  if (code.length > 255) throw new Error('program too long for PUSH1 labels');
  return '0x' + Buffer.from(code).toString('hex');
}

const DATA_CHANGED = keccak256(toHex('DataChanged(bytes32,bytes)'));
const SUPPORTS_INTERFACE = '0x01ffc9a7';
const LSP0 = '0x24871b3d';
const word = (hex) => ['push', hex.replace(/^0x/, '').padStart(64, '0')];

// calldata empty → LOG1(DataChanged) and STOP; otherwise jump to `call`
const prologue = ['CALLDATASIZE', ['to', 'call'], 'JUMPI', ['push', DATA_CHANGED], ['push', '00'], ['push', '00'], 'LOG1', 'STOP', ['label', 'call']];
// supportsInterface → `si`, anything else falls through
const bySelector = [['push', '00'], 'CALLDATALOAD', ['push', 'e0'], 'SHR', ['push', SUPPORTS_INTERFACE], 'EQ', ['to', 'si'], 'JUMPI'];
const returnWord = (hex) => [word(hex), ['push', '00'], 'MSTORE', ['push', '20'], ['push', '00'], 'RETURN'];
const returnEmptyArray = [['push', '20'], ['push', '00'], 'MSTORE', ['push', '00'], ['push', '20'], 'MSTORE', ['push', '40'], ['push', '00'], 'RETURN'];
const returnOneByte = [['push', '42'], ['push', '00'], 'MSTORE8', ['push', '01'], ['push', '00'], 'RETURN'];
const returnNothing = [['push', '00'], ['push', '00'], 'RETURN'];
const revert = [['push', '00'], ['push', '00'], 'REVERT'];
// true exactly for the LSP0 interface id (the argument word starts with it)
const onlyLsp0 = [
  ['push', '04'],
  'CALLDATALOAD',
  ['push', LSP0.slice(2).padEnd(64, '0')],
  'EQ',
  ['push', '00'],
  'MSTORE',
  ['push', '20'],
  ['push', '00'],
  'RETURN',
];

/** The hostile runtimes and the error code the indexer must record for each. */
export const HOSTILE = {
  // the case: every interface claimed, getDataBatch answers an empty array
  claimsEverything: {
    code: 'CLAIMS_EVERY_INTERFACE',
    runtime: assemble([...prologue, ...bySelector, ...returnEmptyArray, ['label', 'si'], ...returnWord('01')]),
  },
  // a "profile" whose getDataBatch answers an empty array (the old values[0] crash)
  emptyArray: { code: 'MALFORMED_ANSWER', runtime: assemble([...prologue, ...bySelector, ...returnEmptyArray, ['label', 'si'], ...onlyLsp0]) },
  // a "profile" whose getDataBatch answers one byte
  shortAnswer: { code: 'MALFORMED_ANSWER', runtime: assemble([...prologue, ...bySelector, ...returnOneByte, ['label', 'si'], ...onlyLsp0]) },
  // a "profile" whose getDataBatch answers nothing at all
  emptyAnswer: { code: 'GETDATA_EMPTY', runtime: assemble([...prologue, ...bySelector, ...returnNothing, ['label', 'si'], ...onlyLsp0]) },
  // every call answers 32 bytes of 0xff (not an ABI bool)
  garbage: { code: 'MALFORMED_ANSWER', runtime: assemble([...prologue, ...returnWord('ff'.repeat(32))]) },
  // every call reverts
  reverts: { code: 'CALL_REVERTED', runtime: assemble([...prologue, ...revert]) },
};
