import { collectionName, indexesOf, path, toFilter, toSort } from './mongo-queries';
import { writesByCollection } from './mongo-batch-writes';

/**
 * The translation of the port's queries and batches into MongoDB's terms, checked without a
 * server (the ReadModelStore contract suite runs them on one when MONGODB_URI is set).
 */
describe('MongoDB read-model queries', () => {
  it('names collections and fields by the same rules as SQLite; documents sit under doc, their key is _id', () => {
    expect(collectionName('users_v1')).toBe('rm_users_v1');
    expect(path('name')).toBe('doc.name');
    expect(path('_id')).toBe('_id');
    for (const bad of ['Users', 'users.v1', '$where', '']) expect(() => collectionName(bad)).toThrow(`Invalid collection name: ${bad}`);
    for (const bad of ['a.b', '$gt', '']) expect(() => toFilter({ where: { [bad]: 1 } })).toThrow(`Invalid field name: ${bad}`);
  });

  it('translates equality, null, `in` and ranges; an empty range is no condition', () => {
    expect(toFilter({ where: { name: 'x', admin: false, gone: null, ids: { in: ['a', null] }, n: { gte: 1, lt: 5 }, open: {} } })).toEqual({
      'doc.name': 'x',
      'doc.admin': false,
      'doc.gone': null,
      'doc.ids': { $in: ['a', null] },
      'doc.n': { $gte: 1, $lt: 5 },
    });
    expect(toFilter({})).toEqual({});
  });

  it('sorts on document fields in the order given', () => {
    expect(toSort([{ field: 'created_at', descending: true }, { field: '_id' }])).toEqual([
      ['doc.created_at', -1],
      ['_id', 1],
    ]);
  });

  it('declares indexes named as in SQLite; a unique one holds only documents with a value in every field', () => {
    const [plain, unique] = indexesOf({
      name: 'rooms_v2',
      indexes: [{ fields: ['instance', { field: 'created_at', descending: true }] }, { fields: ['instance', 'slug'], unique: true }],
    });
    expect(plain).toEqual({ keys: { 'doc.instance': 1, 'doc.created_at': -1 }, options: { name: 'ix_instance_created_at_desc', unique: false } });
    const valued = { $type: ['string', 'number', 'bool', 'object', 'array'] };
    expect(unique).toEqual({
      keys: { 'doc.instance': 1, 'doc.slug': 1 },
      options: { name: 'ix_instance_slug', unique: true, partialFilterExpression: { 'doc.instance': valued, 'doc.slug': valued } },
    });
  });
});

describe('MongoDB batch writes', () => {
  it('groups changes by collection in batch order, each put a replacement from a later position only, its fields as data', () => {
    const writes = writesByCollection([
      { collection: 'a', kind: 'put', document: { _id: '1', text: '$notAnExpression', dropped: undefined }, position: '0002' },
      { collection: 'b', kind: 'delete', id: '9' },
      { collection: 'a', kind: 'delete', id: '1' },
    ]);
    expect([...writes.keys()]).toEqual(['a', 'b']);
    expect(writes.get('b')).toEqual([{ deleteOne: { filter: { _id: '9' } } }]);
    expect(writes.get('a')).toStrictEqual([
      {
        updateOne: {
          filter: { _id: '1' },
          update: [
            {
              $replaceWith: {
                $cond: {
                  if: { $or: [{ $eq: [{ $type: '$position' }, 'missing'] }, { $lt: ['$position', '0002'] }] },
                  then: { _id: '$_id', doc: { $literal: { _id: '1', text: '$notAnExpression' } }, position: { $literal: '0002' } },
                  else: '$$ROOT',
                },
              },
            },
          ],
          upsert: true,
        },
      },
      { deleteOne: { filter: { _id: '1' } } },
    ]);
  });
});
