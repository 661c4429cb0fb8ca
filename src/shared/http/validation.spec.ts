import { ValidationPipe } from '@nestjs/common';
import { DomainError } from '../domain/errors';
import { NewUserDto } from '../../modules/users/presentation/user-fields.dto';
import { V2MessageBodyDto, V6MessageBodyDto } from '../../modules/messages/presentation/message-body.dto';
import { validateBody } from './validation';

/** class-transformer and class-validator the whole way, as the pipe ran before its shortcut. */
const wholeWay = new ValidationPipe({ whitelist: true, transform: true });

const outcome = async (run: () => Promise<unknown>): Promise<{ value?: unknown; error?: unknown }> => {
  try {
    return { value: await run() };
  } catch (error) {
    return { error: error instanceof DomainError ? error.message : String(error) };
  }
};

const cases: [new () => object, unknown][] = [
  [NewUserDto, { id: 'alice', name: 'Alice' }],
  [NewUserDto, { id: 'alice', name: 'Alice', avatar_url: 'https://a/b.png', custom_data: { a: [1, { b: null }] }, extra: 1 }],
  [NewUserDto, { id: 'alice', name: 'Alice', avatar_url: null, custom_data: null }],
  [NewUserDto, { id: 'alice', name: 'Alice', custom_data: JSON.parse('{"__proto__": {"x": 1}}') }],
  [NewUserDto, { id: 'alice', name: 'Alice', custom_data: 'text' }],
  [NewUserDto, { id: '', name: 'Alice' }],
  [NewUserDto, { id: 'x'.repeat(161), name: 5 }],
  [NewUserDto, {}],
  [V6MessageBodyDto, { parts: [{ type: 'text/plain', content: 'hi' }] }],
  [V6MessageBodyDto, { parts: [{ type: 'text/plain', content: 'hi', junk: true }, { type: 'image/png', url: 'https://x/y' }], junk: 2 }],
  [V6MessageBodyDto, { parts: [{ type: 'image/png', attachment: { id: 'a1', more: 1 } }] }],
  [V6MessageBodyDto, { parts: [{ type: 'image/png', attachment: { id: '' } }] }],
  [V6MessageBodyDto, { parts: [{ type: 'image/png', attachment: 'a1' }] }],
  [V6MessageBodyDto, { parts: [{ type: 'not a mime', content: 'hi' }] }],
  [V6MessageBodyDto, { parts: ['text'] }],
  [V6MessageBodyDto, { parts: [null] }],
  [V6MessageBodyDto, { parts: [] }],
  [V6MessageBodyDto, { parts: { type: 'text/plain', content: 'hi' } }],
  [V6MessageBodyDto, {}],
  [V2MessageBodyDto, { text: 'hi' }],
  [V2MessageBodyDto, { text: 'hi', attachment: { resource_link: 'https://x/y', type: 'image', name: 'y.png' } }],
  [V2MessageBodyDto, { text: 'hi', attachment: { resource_link: 'https://x/y', type: 'sound' } }],
  [V2MessageBodyDto, { text: 'hi', attachment: null }],
];

describe('validateBody', () => {
  it.each(cases.map(([dto, body], i) => [i, dto.name, dto, body] as const))(
    'case %i (%s): the same instance or the same 422 as class-transformer and class-validator the whole way',
    async (_i, _name, dto, body) => {
      const ours = await outcome(() => validateBody(dto, structuredClone(body)));
      const theirs = await outcome(() => wholeWay.transform(structuredClone(body), { type: 'body', metatype: dto }));
      if (theirs.error !== undefined) {
        expect(ours.error).toMatch(/./);
        return;
      }
      expect(ours.error).toBeUndefined();
      expect(ours.value).toBeInstanceOf(dto);
      expect(ours.value).toStrictEqual(theirs.value);
    },
  );
});
