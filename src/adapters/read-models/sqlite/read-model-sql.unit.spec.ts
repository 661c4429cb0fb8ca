import { field, indexDefinition, orderTerms, table, whereClause } from './read-model-sql';

describe('read-model SQL', () => {
  it('writes only checked collection and field names into SQL', () => {
    expect(table('users_v1')).toBe('rm_users_v1');
    expect(field('created_at')).toBe(`json_extract(doc, '$.created_at')`);
    for (const name of ['Users', '1users', 'users"; DROP TABLE checkpoints; --', 'a'.repeat(64), '']) {
      expect(() => table(name)).toThrow(`Invalid collection name: ${name}`);
    }
    for (const name of ['a.b', "a') OR 1=1 --", '$x', '']) {
      expect(() => field(name)).toThrow(`Invalid field name: ${name}`);
      expect(() => whereClause({ [name]: 1 })).toThrow(`Invalid field name: ${name}`);
      expect(() => orderTerms([{ field: name }])).toThrow(`Invalid field name: ${name}`);
    }
  });

  it('passes every compared value as a parameter, booleans as 1/0 and an `in` list as one JSON array', () => {
    const hostile = "x' OR '1'='1";
    const { clauses, params } = whereClause({ name: hostile, n: { gte: 1, lt: 5 }, admin: true, gone: null, ids: { in: ['a', null, false] } });
    expect(clauses).toEqual([
      `json_extract(doc, '$.name') = ?`,
      `json_extract(doc, '$.n') >= ?`,
      `json_extract(doc, '$.n') < ?`,
      `json_extract(doc, '$.admin') = ?`,
      `json_extract(doc, '$.gone') IS NULL`,
      // A listed null means "null or missing", which SQL's IN never matches.
      `(json_extract(doc, '$.ids') IN (SELECT value FROM json_each(?)) OR json_extract(doc, '$.ids') IS NULL)`,
    ]);
    expect(params).toEqual([hostile, 1, 5, 1, '["a",0]']);
  });

  it('names an index by its collection and fields, and creates it only if absent', () => {
    expect(indexDefinition('rooms_v2', { fields: ['instance', { field: 'created_at', descending: true }] })).toEqual({
      name: 'ix_rooms_v2_instance_created_at_desc',
      sql: `CREATE INDEX IF NOT EXISTS "ix_rooms_v2_instance_created_at_desc" ON "rm_rooms_v2" (json_extract(doc, '$.instance'), json_extract(doc, '$.created_at') DESC)`,
    });
    expect(indexDefinition('users_v1', { fields: ['email'], unique: true }).sql).toBe(
      `CREATE UNIQUE INDEX IF NOT EXISTS "ix_users_v1_email" ON "rm_users_v1" (json_extract(doc, '$.email'))`,
    );
  });
});
