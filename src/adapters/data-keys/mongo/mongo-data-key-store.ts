import { Collection, MongoClient } from 'mongodb';
import { acquireMongoClient } from '../../shared/shared-mongo-client';
import { DataKeySelector, DataKeyStore, StoredDataKey } from '../../../shared/ports/data-key-store.port';

const DATA_KEYS = 'data_keys';

interface DataKeyDocument {
  _id: string;
  owner: string | null;
  wrapped: string;
  created_at: Date;
}

/** Subtrees per delete command when many are destroyed at once (a deleted room's messages). */
const PREFIXES_PER_DELETE = 500;

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Data keys in MongoDB (`data_keys`), beside the read models of a production deployment.
 * Writes wait for a majority and the journal, so a key survives a failover as the event it
 * seals does; a key's id is its `_id`, so a prefix destroy is a range on the primary index.
 */
export class MongoDataKeyStore implements DataKeyStore {
  static async connect(uri: string, dbName = 'parley'): Promise<MongoDataKeyStore> {
    const shared = await acquireMongoClient(uri);
    const store = new MongoDataKeyStore(shared.client, dbName, shared.release);
    try {
      await store.keys.createIndex({ owner: 1 }, { partialFilterExpression: { owner: { $type: 'string' } } });
    } catch (error) {
      await shared.release().catch(() => undefined);
      throw error;
    }
    return store;
  }

  private readonly keys: Collection<DataKeyDocument>;

  constructor(
    client: MongoClient,
    dbName: string,
    private readonly release: () => Promise<void> = () => client.close(),
  ) {
    this.keys = client.db(dbName).collection<DataKeyDocument>(DATA_KEYS, { writeConcern: { w: 'majority', journal: true }, readConcern: { level: 'majority' } });
  }

  async create(keys: readonly StoredDataKey[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const now = new Date();
    // One durable write for the batch; an id already stored keeps the key stored first.
    await this.keys.bulkWrite(
      keys.map((key) => ({
        updateOne: {
          filter: { _id: key.id },
          update: { $setOnInsert: { owner: key.owner, wrapped: key.wrapped, created_at: key.createdAt === undefined ? now : new Date(key.createdAt) } },
          upsert: true,
        },
      })),
      { ordered: false },
    );
    return this.getMany(keys.map((k) => k.id));
  }

  async getMany(ids: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (ids.length === 0) return found;
    for (const doc of await this.keys.find({ _id: { $in: [...new Set(ids)] } }, { projection: { wrapped: 1 } }).toArray()) {
      found.set(doc._id, doc.wrapped);
    }
    return found;
  }

  async destroy(selector: DataKeySelector): Promise<number> {
    const upTo = selector.createdUpTo === undefined ? {} : { created_at: { $lte: new Date(selector.createdUpTo) } };
    const under = (prefix: string) => ({ _id: { $regex: `^${escapeRegex(prefix)}` } });
    if ('prefixes' in selector) {
      let destroyed = 0;
      for (let i = 0; i < selector.prefixes.length; i += PREFIXES_PER_DELETE) {
        const some = selector.prefixes.slice(i, i + PREFIXES_PER_DELETE);
        destroyed += (await this.keys.deleteMany({ $or: some.map(under), ...upTo })).deletedCount;
      }
      return destroyed;
    }
    const filter = 'ids' in selector ? { _id: { $in: [...selector.ids] } } : 'prefix' in selector ? under(selector.prefix) : { owner: selector.owner };
    return (await this.keys.deleteMany({ ...filter, ...upTo })).deletedCount;
  }

  close(): Promise<void> {
    return this.release();
  }
}
