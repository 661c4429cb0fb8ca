import { deciderSpecification } from '../../../../test/support/decider-specification';
import { instanceImportDecider, instanceImportStream } from './instance-import.decider';
import { InstanceImported } from './instance-import.events';

const outcome: InstanceImported['data'] = {
  import_id: 'job-1',
  outcome: 'done',
  events_appended: 12,
  events_present: 0,
  blobs_copied: 1,
  blobs_present: 0,
  exported_from: 'the operator API',
  exported_at: '2026-11-27T01:00:00.000Z',
  imported_at: '2026-11-27T02:00:00.000Z',
};

describe('instance import decider', () => {
  it('records the outcome of an import as it is, counts and times only', () => {
    deciderSpecification(instanceImportDecider)().when({ type: 'RecordImport', outcome }).then([{ type: 'InstanceImported', data: outcome }]);
  });

  it('keeps each import in a stream of the instance of its own, apart from the instance stream', () => {
    expect(instanceImportStream('acme', 'job-1')).toBe('instanceimport-acme.job-1');
  });
});
