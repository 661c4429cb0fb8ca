import { afterAll } from '@jest/globals';

/**
 * The fast tier's promise, kept while each of its specs runs (jest.unit.config.js loads this
 * file first): no server is started, no socket opened, no process started. Each of these
 * throws instead, naming the tier, and is restored once the spec file has run.
 */
const childProcess: Record<string, unknown> = require('node:child_process');
const net: { Server: { prototype: Record<string, unknown> }; Socket: { prototype: Record<string, unknown> } } = require('node:net');
const dgram: { Socket: { prototype: Record<string, unknown> } } = require('node:dgram');

const refusal = (what: string) => () => {
  throw new Error(`The fast tier (npm run test:unit) ${what}: this spec belongs in the full run (npm test) only; take it out of jest.unit.config.js`);
};

const replaced: [Record<string, unknown>, string, unknown][] = [];
const replace = (target: Record<string, unknown>, name: string, what: string) => {
  replaced.push([target, name, target[name]]);
  target[name] = refusal(what);
};

replace(net.Server.prototype, 'listen', 'starts no server');
replace(net.Socket.prototype, 'connect', 'opens no socket');
// A datagram socket binds before its first send, explicitly or not.
replace(dgram.Socket.prototype, 'bind', 'opens no socket');
for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) replace(childProcess, name, 'starts no process');

afterAll(() => {
  for (const [target, name, original] of replaced.splice(0)) target[name] = original;
});
