import { deciderSpecification } from '../../../../test/support/decider-specification';
import { contentReadDecider } from './content-read.decider';
import { ContentReadEvent } from './content-read.events';

const now = '2026-11-26T23:30:00.000Z';
const given = deciderSpecification(contentReadDecider);
const earlier: ContentReadEvent = {
  type: 'MessageContentRead',
  data: { room_id: 'r', message_count: 1, first_message_id: 3, last_message_id: 3, read_at: now },
};

describe('content read decider', () => {
  it('records which messages of the room were read, by id and count, never their content', () => {
    given()
      .when({ type: 'RecordContentRead', roomId: 'r', messageIds: [9, 7, 8], now })
      .then([{ type: 'MessageContentRead', data: { room_id: 'r', message_count: 3, first_message_id: 7, last_message_id: 9, read_at: now } }]);
  });

  it('records every read, an empty page and a repeated one too', () => {
    given(earlier)
      .when({ type: 'RecordContentRead', roomId: 'r', messageIds: [], now })
      .then([{ type: 'MessageContentRead', data: { room_id: 'r', message_count: 0, first_message_id: null, last_message_id: null, read_at: now } }]);
    given(earlier).when({ type: 'RecordContentRead', roomId: 'r', messageIds: [3], now }).then([earlier]);
  });

  it("names the thread when the page was a thread's replies", () => {
    given()
      .when({ type: 'RecordContentRead', roomId: 'r', messageIds: [12, 14], parentId: 5, now })
      .then([{ type: 'MessageContentRead', data: { room_id: 'r', message_count: 2, first_message_id: 12, last_message_id: 14, parent_id: 5, read_at: now } }]);
  });
});
