import { randomBytes, randomUUID } from 'node:crypto';
import { DataKeyStore, StoredDataKey } from '../../src/shared/ports/data-key-store.port';

/** An adapter under test, and what removes it afterwards; `reopen` opens the same store again (durability). */
export interface DataKeyStoreUnderTest {
  readonly store: DataKeyStore;
  reopen(): Promise<DataKeyStore>;
  cleanup(): Promise<void>;
}

/**
 * The behaviour every DataKeyStore adapter must share, bound per adapter by a one-line spec.
 * Ids carry a random instance prefix, so the suite also runs against a shared server.
 */
export function dataKeyStoreContract(name: string, make: () => Promise<DataKeyStoreUnderTest>): void {
  describe(`DataKeyStore contract: ${name}`, () => {
    let subject: DataKeyStoreUnderTest;
    let store: DataKeyStore;
    let instance: string;
    const key = (rest: string, owner: string | null = null): StoredDataKey => ({
      id: `${instance}/${rest}`,
      owner: owner && `${instance}:${owner}`,
      wrapped: randomBytes(40).toString('base64'),
    });
    const ids = (keys: readonly StoredDataKey[]) => keys.map((k) => k.id);
    const stored = async (keys: readonly StoredDataKey[]) => [...(await store.getMany(ids(keys))).keys()].sort();

    beforeEach(async () => {
      subject = await make();
      store = subject.store;
      instance = `ct${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    });
    afterEach(() => subject.cleanup());

    it('answers the wrapped keys it stored, and nothing for ids never created', async () => {
      const a = key('message/r1/1/0');
      const b = key('user/alice/2026-01-01T00:00:00.000Z', 'alice');
      const created = await store.create([a, b]);
      expect(created).toEqual(new Map([[a.id, a.wrapped], [b.id, b.wrapped]]));
      expect(await store.getMany([a.id, b.id, `${instance}/message/r1/2/0`])).toEqual(new Map([[a.id, a.wrapped], [b.id, b.wrapped]]));
      expect(await store.getMany([])).toEqual(new Map());
    });

    it('keeps the first key of an id created twice, and answers it to the second creator', async () => {
      const first = key('room/r1/t');
      const second = { ...first, wrapped: randomBytes(40).toString('base64') };
      await store.create([first]);
      expect((await store.create([second])).get(first.id)).toBe(first.wrapped);
      expect((await store.getMany([first.id])).get(first.id)).toBe(first.wrapped);
    });

    it('creates concurrent batches, each answered with its own keys, all of them kept after a reopen', async () => {
      const batches = Array.from({ length: 20 }, (_, i) => [key(`message/r1/${i}/0`), key(`message/r2/${i}/0`)]);
      const answers = await Promise.all(batches.map((batch) => store.create(batch)));
      answers.forEach((answer, i) => expect(answer).toEqual(new Map(batches[i].map((k) => [k.id, k.wrapped]))));
      const reopened = await subject.reopen();
      const all = batches.flat();
      expect(await reopened.getMany(ids(all))).toEqual(new Map(all.map((k) => [k.id, k.wrapped])));
    });

    it('destroys by id, answering how many it destroyed, and leaves the others', async () => {
      const keys = [key('message/r1/1/0'), key('message/r1/2/0'), key('message/r1/3/0')];
      await store.create(keys);
      expect(await store.destroy({ ids: [keys[0].id, keys[2].id, `${instance}/nothing`] })).toBe(2);
      expect(await stored(keys)).toEqual([keys[1].id]);
      expect(await store.destroy({ ids: [keys[0].id] })).toBe(0);
    });

    it('destroys every id under a prefix, and no id that merely begins with the same characters', async () => {
      const versions = [key('message/r1/1/0'), key('message/r1/1/1'), key('message/r1/1/2')];
      const neighbours = [key('message/r1/10/0'), key('message/r1/1'), key('message/r10/1/0')];
      await store.create([...versions, ...neighbours]);
      expect(await store.destroy({ prefix: `${instance}/message/r1/1/` })).toBe(3);
      expect(await stored([...versions, ...neighbours])).toEqual(ids(neighbours).sort());
    });

    it('destroys the ids under several prefixes at once, and no other', async () => {
      const doomed = [key('message/1/0'), key('message/1/edit-t'), key('message/2/0')];
      const kept = [key('message/3/0'), key('message/10/0')];
      await store.create([...doomed, ...kept]);
      expect(await store.destroy({ prefixes: [`${instance}/message/1/`, `${instance}/message/2/`, `${instance}/message/9/`] })).toBe(3);
      expect(await stored([...doomed, ...kept])).toEqual(ids(kept).sort());
    });

    it('destroys a whole instance by its prefix, and no other instance', async () => {
      const mine = [key('message/r1/1/0'), key('user/u/t', 'u'), key('room/r1/t')];
      const other = { id: `${instance}x/message/r1/1/0`, owner: null, wrapped: randomBytes(40).toString('base64') };
      await store.create([...mine, other]);
      expect(await store.destroy({ prefix: `${instance}/` })).toBe(3);
      expect(await stored([...mine, other])).toEqual([other.id]);
      await store.destroy({ ids: [other.id] });
    });

    it('destroys every key of an owner, and not those of another', async () => {
      const alice = [key('user/alice/t', 'alice'), key('message/r1/1/0', 'alice'), key('message/r2/5/0', 'alice')];
      const bob = [key('user/bob/t', 'bob'), key('message/r1/2/0', 'bob'), key('room/r1/t')];
      await store.create([...alice, ...bob]);
      expect(await store.destroy({ owner: `${instance}:alice` })).toBe(3);
      expect(await stored([...alice, ...bob])).toEqual(ids(bob).sort());
    });

    it('leaves keys created after createdUpTo, whatever the selector', async () => {
      const older = [key('message/r1/1/0', 'alice'), key('message/r1/2/0', 'alice')];
      await store.create(older);
      // A key created later than the bound: the clock moves on past it first.
      const bound = Date.now();
      while (Date.now() <= bound + 1) await new Promise((resolve) => setImmediate(resolve));
      const newer = [key('message/r1/1/1', 'alice')];
      await store.create(newer);
      expect(await store.destroy({ prefix: `${instance}/message/r1/1/`, createdUpTo: bound })).toBe(1);
      expect(await store.destroy({ owner: `${instance}:alice`, createdUpTo: bound })).toBe(1);
      expect(await store.destroy({ ids: ids(newer), createdUpTo: bound })).toBe(0);
      expect(await stored([...older, ...newer])).toEqual(ids(newer));
    });

    it('dates a key at the createdAt it is given: a destroy bounded before it leaves it, one bounded at or after it takes it', async () => {
      const at = Date.parse('2020-01-02T03:04:05.006Z');
      const dated = [{ ...key('message/r1/1/0', 'alice'), createdAt: at }, { ...key('message/r1/2/0', 'alice'), createdAt: at + 10 }];
      await store.create(dated);
      expect(await store.destroy({ prefix: `${instance}/message/r1/`, createdUpTo: at - 1 })).toBe(0);
      expect(await store.destroy({ prefix: `${instance}/message/r1/`, createdUpTo: at })).toBe(1);
      expect(await stored(dated)).toEqual([dated[1].id]);
    });

    it('keeps a destroy after a reopen', async () => {
      const keys = [key('message/r1/1/0'), key('message/r1/2/0')];
      await store.create(keys);
      await store.destroy({ prefix: `${instance}/message/r1/1/` });
      const reopened = await subject.reopen();
      expect([...(await reopened.getMany(ids(keys))).keys()]).toEqual([keys[1].id]);
    });
  });
}
