// better-sqlite3 as the fast tier sees it (jest.unit.config.js maps the module here): the real
// one, for in-memory databases only. A spec that opens a database file belongs in the full run.
const Database = require('better-sqlite3/lib/index.js');

const refuseFiles = (args) => {
  const [file] = args;
  if (file !== undefined && file !== ':memory:' && file !== '') {
    throw new Error(`The fast tier (npm run test:unit) opens no SQLite file (${file}): this spec belongs in the full run (npm test) only; take it out of jest.unit.config.js`);
  }
};

module.exports = new Proxy(Database, {
  construct(target, args, newTarget) {
    refuseFiles(args);
    return Reflect.construct(target, args, newTarget);
  },
  apply(target, self, args) {
    refuseFiles(args);
    return Reflect.apply(target, self, args);
  },
});
