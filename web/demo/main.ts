import type { CurrentUser, Room } from '@pusher/chatkit-client';
import { readPageConfig } from '../shared/page-config';
import { h, show } from './dom';
import { RoomView } from './room-view';
import { connect, signUp } from './session';
import './style.css';

/** Written into the page by the server (src/app/demo-page.ts). */
interface DemoConfig {
  instanceLocator: string;
}

const app = document.getElementById('app')!;
/** The name picked last in this browser, offered again (any name may be picked). */
const LAST_NAME = 'parley-demo-user';
const { instanceLocator } = readPageConfig<DemoConfig>();

/** Pick a user name: created if new, then connected. */
function signInScreen(message = ''): void {
  const input = h('input', { name: 'user', required: true, maxlength: '59', pattern: '[A-Za-z0-9_.@\\-]+', placeholder: 'e.g. alice', autocomplete: 'username', 'data-test': 'user-name' });
  input.value = localStorage.getItem(LAST_NAME) ?? '';
  const error = h('p', { class: 'error', 'data-test': 'error', role: 'alert' }, message);
  const form = h(
    'form',
    { class: 'sign-in', 'data-test': 'sign-in' },
    h('h1', {}, 'Parley demo chat'),
    h('label', {}, 'Pick a user name ', input),
    h('button', { type: 'submit' }, 'Start chatting'),
    error,
    h('p', { class: 'hint' }, 'Letters, digits and _ . @ -. Anyone may sign in as any name here: this is the test token provider.'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const userId = input.value.trim();
    localStorage.setItem(LAST_NAME, userId);
    show(error, 'Connecting…');
    void start(userId).catch((e: Error) => signInScreen(e.message ?? String(e)));
  });
  show(app, form);
  input.focus();
}

async function start(userId: string): Promise<void> {
  if (!instanceLocator) throw new Error('This page was served without an instance (see docs/demo.md)');
  await signUp(instanceLocator, userId);
  let redraw = () => undefined as void;
  const currentUser = await connect(instanceLocator, userId, {
    onAddedToRoom: () => redraw(),
    onRemovedFromRoom: () => redraw(),
    onRoomUpdated: () => redraw(),
    onRoomDeleted: () => redraw(),
  });
  redraw = chatScreen(currentUser);
}

/** Rooms on the left (yours, and the ones you may join), the open room on the right. */
function chatScreen(user: CurrentUser): () => void {
  const myRooms = h('ul', { class: 'rooms', 'data-test': 'my-rooms' });
  const joinable = h('ul', { class: 'rooms', 'data-test': 'joinable-rooms' });
  const roomName = h('input', { name: 'room', required: true, maxlength: '60', placeholder: 'New room name', 'data-test': 'room-name-input', 'aria-label': 'New room name' });
  const newRoom = h('form', { class: 'new-room', 'data-test': 'new-room' }, roomName, h('button', { type: 'submit' }, 'Create'));
  const refresh = h('button', { type: 'button', class: 'link', 'data-test': 'refresh-rooms' }, 'Refresh');
  const notice = h('p', { class: 'error', role: 'alert', 'data-test': 'notice' });
  const main = h('div', { class: 'room-pane' }, h('p', { class: 'empty' }, 'Create a room or join one to start.'));
  let open: RoomView | undefined;

  const fail = (error: Error) => show(notice, error.message ?? String(error));

  const openRoom = async (room: Room) => {
    open?.close();
    open = new RoomView(user, room.id, room.name);
    show(main, open.element);
    drawRooms();
    await open.open();
  };

  const drawRooms = () => {
    const rooms = [...user.rooms].sort((a, b) => a.name.localeCompare(b.name));
    show(
      myRooms,
      ...rooms.map((room) => {
        const button = h(
          'button',
          { type: 'button', class: open?.element.dataset.roomId === room.id ? 'room-link active' : 'room-link', 'data-room-id': room.id },
          room.name,
          room.unreadCount ? h('span', { class: 'unread', 'data-test': 'unread' }, String(room.unreadCount)) : null,
        );
        button.addEventListener('click', () => void openRoom(room).catch(fail));
        return h('li', {}, button);
      }),
    );
  };

  const drawJoinable = async () => {
    const rooms = (await user.getJoinableRooms()).sort((a, b) => a.name.localeCompare(b.name));
    show(
      joinable,
      ...rooms.map((room) => {
        const button = h('button', { type: 'button', 'data-room-id': room.id }, 'Join');
        button.addEventListener('click', () => {
          void user
            .joinRoom({ roomId: room.id })
            .then((joined) => Promise.all([openRoom(joined), drawJoinable()]))
            .catch(fail);
        });
        return h('li', { class: 'joinable' }, h('span', {}, room.name), button);
      }),
    );
    if (rooms.length === 0) show(joinable, h('li', { class: 'empty' }, 'None'));
  };

  newRoom.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = roomName.value.trim();
    if (!name) return;
    void user
      .createRoom({ name })
      .then((room) => {
        roomName.value = '';
        return openRoom(room);
      })
      .catch(fail);
  });
  refresh.addEventListener('click', () => void drawJoinable().catch(fail));

  show(
    app,
    h(
      'div',
      { class: 'chat', 'data-test': 'chat' },
      h(
        'aside',
        {},
        h('p', { class: 'me', 'data-test': 'signed-in-as' }, 'Signed in as ', h('strong', {}, user.name || user.id)),
        h('h3', {}, 'Your rooms'),
        myRooms,
        newRoom,
        h('h3', {}, 'Rooms to join ', refresh),
        joinable,
        notice,
      ),
      main,
    ),
  );
  drawRooms();
  void drawJoinable().catch(fail);
  return drawRooms;
}

signInScreen();
