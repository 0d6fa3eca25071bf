/** Shared setup of the IP tests: closed ports (the private CrowdSec LAPI is test/helpers/crowdsec-lapi.ts). */
import { createServer } from 'node:net';

/** A 127.0.0.1 port nothing listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
