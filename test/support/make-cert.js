// Writes a self-signed certificate for localhost (SANs DNS:localhost, IP:127.0.0.1) that the
// test run trusts through NODE_EXTRA_CA_CERTS, which Node reads only at process start: so this
// runs before jest (npm test), not inside it.
const { existsSync, mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const selfsigned = require('selfsigned');

const dir = join(__dirname, '..', '.certs');
const cert = join(dir, 'localhost.pem');
const key = join(dir, 'localhost-key.pem');

async function main() {
  if (existsSync(cert) && existsSync(key)) return;
  mkdirSync(dir, { recursive: true });
  const notAfter = new Date();
  notAfter.setFullYear(notAfter.getFullYear() + 5);
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
    ],
  });
  writeFileSync(cert, pems.cert);
  writeFileSync(key, pems.private, { mode: 0o600 });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
