import { DataKeyRing } from './data-key-ring';
import { SecretBox } from './secret-box';
import { DataKeyStore } from '../ports/data-key-store.port';

const box = SecretBox.fromBase64(Buffer.alloc(32, 3).toString('base64'));
/** No key is stored: what the ring answers here comes from what it was handed. */
const noKeys = { getMany: async () => new Map() } as unknown as DataKeyStore;

describe('DataKeyRing: texts handed over by another thread', () => {
  const handedRing = () => {
    const ring = new DataKeyRing(noKeys, box);
    ring.rememberHanded('acme/room-1/m1', 'ct-1', '{"text":"one"}');
    ring.rememberHanded('acme/room-2/m2', 'ct-2', '{"text":"two"}');
    return ring;
  };

  it('answers a handed text once, and only for its ciphertext', () => {
    const ring = handedRing();
    expect(ring.known('acme/room-1/m1', 'another')).toBeUndefined();
    expect(ring.known('acme/room-1/m1', 'ct-1')).toBe('{"text":"one"}');
    expect(ring.known('acme/room-1/m1', 'ct-1')).toBeUndefined();
  });

  it.each([
    ['by id', { ids: ['acme/room-1/m1'] }, ['two']],
    ['by prefix', { prefix: 'acme/room-2/' }, ['one']],
    ['by prefixes', { prefixes: ['acme/room-1/', 'acme/room-2/'] }, []],
    ['by owner (a handed text names none: all)', { owner: 'alice@1' }, []],
  ])('forgets the handed texts a destroy takes (%s)', (_how, selector, kept) => {
    const ring = handedRing();
    ring.forgetDestroyed(selector);
    const left = [ring.known('acme/room-1/m1', 'ct-1'), ring.known('acme/room-2/m2', 'ct-2')].filter((t): t is string => typeof t === 'string');
    expect(left.map((t) => (JSON.parse(t) as { text: string }).text)).toEqual(kept);
  });

  it('keeps no text sealed under several keys (a destroy names each key alone)', () => {
    const ring = new DataKeyRing(noKeys, box);
    ring.rememberHanded('acme/a\nacme/b', 'ct', '{"text":"both"}');
    expect(ring.known('acme/a\nacme/b', 'ct')).toBeUndefined();
  });

  it('keeps the unread texts bounded, by count and by size: the oldest go first', () => {
    const ring = new DataKeyRing(noKeys, box);
    for (let i = 0; i < 5_000; i++) ring.rememberHanded(`acme/m${i}`, `ct-${i}`, `{"text":"${i}"}`);
    expect(ring.known('acme/m0', 'ct-0')).toBeUndefined();
    expect(ring.known('acme/m4999', 'ct-4999')).toBe('{"text":"4999"}');
    const huge = `{"text":"${'x'.repeat(5 * 1024 * 1024)}"}`;
    ring.rememberHanded('acme/huge', 'ct-huge', huge);
    expect(ring.known('acme/huge', 'ct-huge')).toBeUndefined();
  });
});

describe('DataKeyRing: the texts its keys sealed or opened', () => {
  /** Every key asked for exists (a fresh nonce each): what the ring keeps is what it was told. */
  const everyKey = {
    getMany: async (ids: readonly string[]) => new Map(ids.map((id) => [id, `d1.${Buffer.alloc(32, id.length).toString('base64')}`])),
  } as unknown as DataKeyStore;

  const ringWith = async (ids: string[]) => {
    const ring = new DataKeyRing(everyKey, box);
    await ring.existing(ids);
    return ring;
  };

  it('answers a remembered text for its ciphertext, as often as it is read, and the key otherwise', async () => {
    const ring = await ringWith(['acme/m1']);
    ring.remember('acme/m1', 'ct-1', '{"text":"one"}');
    expect(ring.known('acme/m1', 'ct-1')).toBe('{"text":"one"}');
    expect(ring.known('acme/m1', 'ct-1')).toBe('{"text":"one"}');
    expect(ring.known('acme/m1', 'another')).toBeInstanceOf(Buffer);
  });

  it('keeps only the newest texts, by count and by size, whatever the number of keys cached', async () => {
    const ids = Array.from({ length: 12_000 }, (_, i) => `acme/m${i}`);
    const ring = await ringWith(ids);
    ids.forEach((id, i) => ring.remember(id, `ct-${i}`, `{"text":"${i}"}`));
    expect(ring.known('acme/m0', 'ct-0')).toBeInstanceOf(Buffer);
    expect(ring.known('acme/m11999', 'ct-11999')).toBe('{"text":"11999"}');
    const huge = `{"text":"${'x'.repeat(5 * 1024 * 1024)}"}`;
    ring.remember('acme/m11998', 'ct-huge', huge);
    expect(ring.known('acme/m11998', 'ct-huge')).toBeInstanceOf(Buffer);
  });

  it('remembers nothing for a key it does not hold, and forgets the texts of the keys a destroy takes', async () => {
    const ring = await ringWith(['acme/room-1/m1', 'acme/room-2/m2']);
    ring.remember('acme/unknown', 'ct', '{"text":"?"}');
    expect(ring.known('acme/unknown', 'ct')).toBeUndefined();
    ring.remember('acme/room-1/m1', 'ct-1', '{"text":"one"}');
    ring.remember('acme/room-2/m2', 'ct-2', '{"text":"two"}');
    ring.forgetDestroyed({ prefix: 'acme/room-1/' });
    expect(ring.known('acme/room-1/m1', 'ct-1')).toBeUndefined();
    expect(ring.known('acme/room-2/m2', 'ct-2')).toBe('{"text":"two"}');
  });

  it('answers no text of a key that another process destroyed and made again under the same id', async () => {
    let fill = 1;
    const remade = { getMany: async (ids: readonly string[]) => new Map(ids.map((id) => [id, `d1.${Buffer.alloc(32, fill).toString('base64')}`])) } as unknown as DataKeyStore;
    const ring = new DataKeyRing(remade, box, { size: 100, ttlMs: 1 });
    await ring.existing(['acme/m1']);
    ring.remember('acme/m1', 'ct-1', '{"text":"one"}');
    fill = 2; // destroyed and made again elsewhere: the ring learns it when its cached key expires
    await new Promise((resolve) => setTimeout(resolve, 5));
    await ring.existing(['acme/m1']);
    expect(ring.known('acme/m1', 'ct-1')).toBeInstanceOf(Buffer);
  });
});
