import type { AttachmentPart, CurrentUser, Message, Room, User } from '@pusher/chatkit-client';
import { h, show } from './dom';

const MESSAGE_LIMIT = 50;

const formatSize = (bytes: number) => (bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1048576).toFixed(1)} MiB`);
const nameOf = (user: User | undefined, fallback: string) => user?.name || user?.id || fallback;

/**
 * One open room: its members with their presence, its messages (text and files) with read
 * receipts, who is typing, and the composer. Everything arrives through the room subscription's
 * hooks (`subscribeToRoomMultipart`); the view redraws the part that changed.
 */
export class RoomView {
  readonly element: HTMLElement;
  private readonly members = h('ul', { class: 'members', 'data-test': 'members' });
  private readonly messageList = h('ol', { class: 'messages', 'data-test': 'messages' });
  private readonly typingLine = h('p', { class: 'typing', 'data-test': 'typing', 'aria-live': 'polite' });
  private readonly status = h('p', { class: 'status', 'data-test': 'room-status' });
  private readonly messages = new Map<number, Message>();
  private readonly typing = new Map<string, string>();
  /** Each member's read cursor: the id of the last message they have seen. */
  private readonly cursors = new Map<string, number>();
  /** Download links, asked once per attachment (they are signed and expire: the SDK renews them). */
  private readonly links = new Map<string, Promise<string>>();
  private room: Room | undefined;
  private closed = false;

  constructor(
    private readonly user: CurrentUser,
    private readonly roomId: string,
    roomName: string,
  ) {
    const text = h('input', { name: 'text', placeholder: 'Write a message', autocomplete: 'off', 'data-test': 'message-text', 'aria-label': 'Message' });
    const file = h('input', { type: 'file', name: 'file', 'data-test': 'message-file', 'aria-label': 'Attach a file' });
    const composer = h('form', { class: 'composer', 'data-test': 'composer' }, text, file, h('button', { type: 'submit' }, 'Send'));
    text.addEventListener('input', () => {
      if (text.value) void this.user.isTypingIn({ roomId }).catch(() => undefined);
    });
    composer.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send(text, file);
    });
    this.element = h(
      'section',
      { class: 'room', 'data-test': 'room', 'data-room-id': roomId },
      h('header', {}, h('h2', { 'data-test': 'room-name' }, roomName), this.members),
      this.messageList,
      this.typingLine,
      this.status,
      composer,
    );
    document.addEventListener('visibilitychange', this.markRead);
  }

  /** Subscribes to the room: its last messages, then everything new. */
  async open(): Promise<void> {
    this.room = await this.user.subscribeToRoomMultipart({
      roomId: this.roomId,
      messageLimit: MESSAGE_LIMIT,
      hooks: {
        onMessage: (message) => {
          this.messages.set(message.id, message);
          this.drawMessages();
          this.markRead();
        },
        onUserStartedTyping: (user) => {
          this.typing.set(user.id, nameOf(user, user.id));
          this.drawTyping();
        },
        onUserStoppedTyping: (user) => {
          this.typing.delete(user.id);
          this.drawTyping();
        },
        onUserJoined: () => this.drawMembers(),
        onUserLeft: () => this.drawMembers(),
        onPresenceChanged: () => this.drawMembers(),
        onNewReadCursor: (cursor) => {
          this.cursors.set(cursor.userId, cursor.position);
          this.drawMessages();
        },
      },
    });
    for (const member of this.room.users) {
      const cursor = member.id === this.user.id ? undefined : this.user.readCursor({ roomId: this.roomId, userId: member.id });
      if (cursor) this.cursors.set(member.id, cursor.position);
    }
    this.drawMembers();
    this.drawMessages();
    this.markRead();
  }

  close(): void {
    this.closed = true;
    document.removeEventListener('visibilitychange', this.markRead);
    this.user.roomSubscriptions[this.roomId]?.cancel();
  }

  private async send(text: HTMLInputElement, file: HTMLInputElement): Promise<void> {
    const content = text.value.trim();
    const chosen = file.files?.[0];
    if (!content && !chosen) return;
    const parts = [...(content ? [{ type: 'text/plain', content }] : []), ...(chosen ? [{ file: chosen, name: chosen.name }] : [])];
    show(this.status, chosen ? `Sending ${chosen.name}…` : '');
    try {
      await this.user.sendMultipartMessage({ roomId: this.roomId, parts });
      text.value = '';
      file.value = '';
      show(this.status);
    } catch (error) {
      show(this.status, `Not sent: ${(error as Error).message ?? error}`);
    }
  }

  /** Moves my read cursor to the newest message while the room is on screen. */
  private readonly markRead = () => {
    if (this.closed || document.visibilityState !== 'visible' || this.messages.size === 0) return;
    const newest = Math.max(...this.messages.keys());
    if ((this.cursors.get(this.user.id) ?? -1) >= newest) return;
    this.cursors.set(this.user.id, newest);
    void this.user.setReadCursor({ roomId: this.roomId, position: newest }).catch(() => this.cursors.delete(this.user.id));
  };

  private drawMembers(): void {
    const users = [...(this.room?.users ?? [])].sort((a, b) => a.id.localeCompare(b.id));
    show(
      this.members,
      ...users.map((member) =>
        h(
          'li',
          { class: `member ${member.presence.state}`, 'data-user-id': member.id, 'data-presence': member.presence.state, title: member.presence.state },
          nameOf(member, member.id),
        ),
      ),
    );
  }

  private drawTyping(): void {
    const names = [...this.typing.values()];
    show(this.typingLine, names.length === 0 ? '' : `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} typing…`);
  }

  private drawMessages(): void {
    const ordered = [...this.messages.values()].sort((a, b) => a.id - b.id);
    // A receipt sits under the last message each other member has read (not under their own).
    const seenBy = new Map<number, string[]>();
    for (const [userId, position] of this.cursors) {
      if (userId === this.user.id) continue;
      const last = ordered.filter((m) => m.id <= position).pop();
      if (!last || last.senderId === userId) continue;
      const member = this.room?.users.find((u) => u.id === userId);
      seenBy.set(last.id, [...(seenBy.get(last.id) ?? []), nameOf(member, userId)]);
    }
    show(
      this.messageList,
      ...ordered.map((message) => {
        const readers = seenBy.get(message.id);
        return h(
          'li',
          { class: message.senderId === this.user.id ? 'message mine' : 'message', 'data-message-id': String(message.id), 'data-sender': message.senderId },
          h('span', { class: 'sender' }, nameOf(message.sender, message.senderId)),
          ...message.parts.map((part, index) => {
            if (part.partType === 'inline') return h('p', { class: 'text' }, part.payload.content);
            if (part.partType === 'url') return h('a', { href: part.payload.url, rel: 'noopener noreferrer', target: '_blank' }, part.payload.url);
            return this.attachment(message, index, part);
          }),
          readers && h('span', { class: 'receipt', 'data-test': 'receipt' }, `Seen by ${readers.join(', ')}`),
        );
      }),
    );
    this.messageList.lastElementChild?.scrollIntoView({ block: 'end' });
  }

  private attachment(message: Message, index: number, part: AttachmentPart): HTMLElement {
    const { name, size, type } = part.payload;
    const key = `${message.id}/${index}`;
    let link = this.links.get(key);
    if (!link) {
      link = part.payload.url();
      this.links.set(key, link);
    }
    const anchor = h('a', { class: 'attachment', 'data-test': 'attachment', rel: 'noopener noreferrer', target: '_blank' }, `${name} (${formatSize(size)})`);
    const holder = h('div', { class: 'file' }, anchor);
    void link.then(
      (url) => {
        anchor.href = url;
        // The page's policy loads images from its own origin only: a link elsewhere stays a link
        // (download links name PUBLIC_URL, or the server's own address: docs/demo.md).
        if (type.startsWith('image/') && new URL(url, window.location.href).origin === window.location.origin) holder.prepend(h('img', { src: url, alt: name }));
      },
      () => anchor.append(' (unavailable)'),
    );
    return holder;
  }
}
