import { MongoClient, MongoClientOptions } from 'mongodb';

/** A MongoClient borrowed from the process's pool for one URI; `release` once when done. */
export interface SharedMongoClient {
  readonly client: MongoClient;
  /** Gives the client back; the last user to release it closes it. Idempotent. */
  release(): Promise<void>;
}

interface Entry {
  readonly client: MongoClient;
  readonly connected: Promise<unknown>;
  users: number;
}

const clients = new Map<string, Entry>();

/**
 * How long a call waits for a server it can use (a reachable primary) before it fails, unless
 * MONGODB_URI sets `serverSelectionTimeoutMS` itself: the driver's 30 s held every request that
 * long while MongoDB was unreachable or electing. EventStoreDB calls have the same 10 s bound.
 */
export const SERVER_SELECTION_TIMEOUT_MS = 10_000;

export const mongoClientOptions = (uri: string): MongoClientOptions =>
  /[?&]serverSelectionTimeoutMS=/i.test(uri) ? {} : { serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS };

/**
 * One MongoClient (one connection pool, one set of monitoring connections) per URI in the
 * process, shared by the MongoDB adapters (read models, GridFS blobs, rate counters), which
 * would otherwise each open their own to the same deployment. Counted by users: the client
 * closes when the last adapter using it closes. A failed connect is not kept, so the next
 * caller tries afresh.
 */
export async function acquireMongoClient(uri: string): Promise<SharedMongoClient> {
  let entry = clients.get(uri);
  if (!entry) {
    const client = new MongoClient(uri, mongoClientOptions(uri));
    const created: Entry = { client, connected: client.connect(), users: 0 };
    created.connected.catch(() => {
      if (clients.get(uri) === created) clients.delete(uri);
    });
    clients.set(uri, created);
    entry = created;
  }
  const used = entry;
  used.users++;
  try {
    await used.connected;
  } catch (error) {
    used.users--;
    if (used.users === 0) await used.client.close().catch(() => undefined);
    throw error;
  }
  let released = false;
  return {
    client: used.client,
    release: async () => {
      if (released) return;
      released = true;
      used.users--;
      if (used.users > 0) return;
      if (clients.get(uri) === used) clients.delete(uri);
      await used.client.close();
    },
  };
}
