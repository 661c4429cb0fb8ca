/**
 * The fast tier, `npm run test:unit`: deciders, projections, configuration and other pure code,
 * with no server, socket, process or SQLite file (test/support/unit-tier/ refuses them while
 * its specs run). `npm test` (jest.config.js) runs these specs too, with everything else.
 *
 * A spec is in it by its folder, by its name (`*.unit.spec.ts`, anywhere: the way for a new
 * pure spec to join), or by being listed below.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const full = require('./jest.config');

const FOLDERS = ['projections/**', 'src/modules/*/domain/**', 'src/shared/domain/**', 'src/config/**'];
const LISTED = [
  'src/client/client-tokens.spec.ts',
  'src/shared/crypto/link-signer.spec.ts',
  'src/modules/beams/devices/beams-token.spec.ts',
  'src/modules/beams/devices/web-push-subscription.spec.ts',
  'src/modules/beams/publish/interest-publish-rate.spec.ts',
  'src/modules/health/projection-lag.spec.ts',
  'src/modules/messages/presentation/message.presenter.spec.ts',
  'src/modules/presence/presence-tracker.spec.ts',
  'src/shared/application/projection-runtime/projector/held-projections.spec.ts',
  'src/shared/application/projection-runtime/projector/projection-event-error.spec.ts',
  'src/shared/application/projection-runtime/projector/projection-slot.spec.ts',
  'src/shared/application/projection-runtime/projector/status.spec.ts',
  'src/shared/application/projection-runtime/projector/written-ids.spec.ts',
  'src/shared/crypto/secret-box.spec.ts',
  'src/shared/http/access-log.spec.ts',
  'src/shared/http/bearer.spec.ts',
  'src/shared/http/validation.spec.ts',
  'src/shared/ports/event-store.port.spec.ts',
  'src/shared/subscriptions/event-channel.spec.ts',
  'src/shared/webhooks/webhook-targets.spec.ts',
  'test/support/decider-specification.spec.ts',
  'test/support/waiting.spec.ts',
];
// A listed spec that moved would silently leave the tier: say so instead.
const missing = LISTED.filter((file) => !existsSync(join(__dirname, file)));
if (missing.length > 0) throw new Error(`jest.unit.config.js lists specs that do not exist (moved or renamed?): ${missing.join(', ')}`);

module.exports = {
  ...full,
  testMatch: [...FOLDERS.map((folder) => `<rootDir>/${folder}/*.spec.ts`), '<rootDir>/**/*.unit.spec.ts', ...LISTED.map((file) => `<rootDir>/${file}`)],
  setupFilesAfterEnv: ['<rootDir>/test/support/unit-tier/guard.ts'],
  moduleNameMapper: { '^better-sqlite3$': '<rootDir>/test/support/unit-tier/in-memory-sqlite.js' },
};
