import { MessageDocument } from '../../../../projections/messages/messages.projection';
import { MessagePart, nameOfLink, partsFromV2 } from '../domain/message-parts';
import { AttachmentResolver } from './attachments.port';
import { presentMessage } from './message.presenter';

const attachments: AttachmentResolver = {
  toStoredPart: () => Promise.reject(new Error('not used')),
  fromV2Link: () => Promise.reject(new Error('not used')),
  render: (_instance, _room, attachment) => ({
    id: attachment.id,
    download_url: `https://parley.test/download/${attachment.id}`,
    refresh_url: `https://parley.test/refresh/${attachment.id}`,
    expiration: '2030-01-01T00:00:00.000Z',
    name: attachment.name ?? attachment.id,
    size: attachment.size ?? 0,
  }),
};

const doc = (parts: MessagePart[]): MessageDocument => ({
  _id: 'd',
  instance_id: 'i',
  room_id: 'r',
  id: 1,
  user_id: 'ann',
  parts,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  visible: true,
});

describe('a message through v2 and v6', () => {
  it('stores a v2 attachment under the part type Chatkit showed through v6, and reads it back through v2 as sent, named', () => {
    for (const [kind, type] of [
      ['image', 'image/x-pusher-img'],
      ['video', 'video/x-pusher-video'],
      ['audio', 'audio/x-pusher-audio'],
      ['file', 'file/x-pusher-file'],
    ] as const) {
      const parts = partsFromV2('see', { resource_link: 'https://cataas.com/cat', type: kind });
      expect(presentMessage(6, doc(parts), attachments).parts).toEqual([
        { type: 'text/plain', content: 'see' },
        { type, url: 'https://cataas.com/cat' },
      ]);
      expect(presentMessage(2, doc(parts), attachments)).toMatchObject({
        text: 'see',
        attachment: { resource_link: 'https://cataas.com/cat', type: kind, name: 'cat' },
      });
    }
  });

  it('reads the wildcard types older logs hold for v2 links as Chatkit showed them', () => {
    const stored: MessagePart[] = [
      { type: 'text/plain', content: 'old' },
      { type: 'image/*', url: 'https://x.test/a.png' },
    ];
    expect(presentMessage(6, doc(stored), attachments).parts).toEqual([
      { type: 'text/plain', content: 'old' },
      { type: 'image/x-pusher-img', url: 'https://x.test/a.png' },
    ]);
    expect(presentMessage(2, doc(stored), attachments).attachment).toEqual({ resource_link: 'https://x.test/a.png', type: 'image', name: 'a.png' });
    // A v6 sender's own types are never rewritten.
    const v6: MessagePart[] = [{ type: 'application/octet-stream', url: 'https://x.test/blob' }];
    expect(presentMessage(6, doc(v6), attachments).parts).toEqual(v6);
  });

  it('names a v2 attachment by the name it was sent with, else by its file, else by its link', () => {
    const named = partsFromV2('x', { resource_link: 'https://x.test/files/abc', type: 'file', name: 'report.pdf' });
    expect(presentMessage(2, doc(named), attachments).attachment).toMatchObject({ name: 'report.pdf' });
    const upload: MessagePart[] = [{ type: 'application/json', attachment: { id: 'a1', name: 'data.json', size: 3 } }];
    expect(presentMessage(2, doc(upload), attachments).attachment).toEqual({
      resource_link: 'https://parley.test/download/a1',
      type: 'file',
      name: 'data.json',
    });
  });

  it("names a link by its URL's last path segment (decoded, without query or fragment), else its host, else its text", () => {
    expect(nameOfLink('https://cataas.com/cat')).toBe('cat');
    expect(nameOfLink('https://i.imgur.com/rJbRKLU.gif')).toBe('rJbRKLU.gif');
    expect(nameOfLink('https://x.test/a/b/photo%20one.jpg?size=2#top')).toBe('photo one.jpg');
    expect(nameOfLink('https://x.test/dir/')).toBe('dir');
    expect(nameOfLink('https://x.test/bad%E0%A4%A')).toBe('bad%E0%A4%A');
    expect(nameOfLink('https://x.test')).toBe('x.test');
    expect(nameOfLink('folder/file.txt?v=1')).toBe('file.txt');
    expect(nameOfLink('plain')).toBe('plain');
    expect(nameOfLink('/')).toBe('/');
  });
});
