import { createServer } from 'node:net';

/** A port of 127.0.0.1 nothing listens on now: for a server that must come back on the same port, or a worker's METRICS_PORT. */
export const freePort = (): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
