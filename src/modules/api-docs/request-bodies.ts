import type { ReferenceObject, RequestBodyObject, SchemaObject } from '@nestjs/swagger';
import { V2MessageBodyDto, V6MessageBodyDto } from '../messages/presentation/message-body.dto';
import { CreateRoomDto, RoomFieldsDto, V2CreateRoomDto, V2RoomFieldsDto } from '../rooms/presentation/room-fields';

const json = (schema: SchemaObject | ReferenceObject): RequestBodyObject => ({ required: true, content: { 'application/json': { schema } } });
const strings: SchemaObject = { type: 'array', items: { type: 'string' } };

/** DTO classes the document describes though no controller names them (their bodies are read by version). */
export const EXTRA_MODELS = [V2MessageBodyDto, V6MessageBodyDto, CreateRoomDto, V2CreateRoomDto, RoomFieldsDto, V2RoomFieldsDto];

const messageBody = json({
  oneOf: [{ $ref: '#/components/schemas/V2MessageBodyDto' }, { $ref: '#/components/schemas/V6MessageBodyDto' }],
  description: 'v2: `{text, attachment?}`; v6: `{parts}`',
});

/** A body read by API version: the v6 schema, then the v2 one. */
const byVersion = (v6: string, v2: string, description: string): RequestBodyObject =>
  json({ oneOf: [{ $ref: `#/components/schemas/${v6}` }, { $ref: `#/components/schemas/${v2}` }], description });
const banTerms = json({
  type: 'object',
  properties: {
    reason: { type: 'string', maxLength: 500, description: 'Why (sealed in the log; gone once the ban is lifted)' },
    until: { type: 'string', format: 'date-time', description: 'When the ban ends by itself (absent: until lifted)' },
    shadow: { type: 'boolean', description: "The user's writes succeed and what they send shows to them alone" },
  },
  description: 'No body: a ban with no reason and no end, not shadowed',
});
const roomNames = 'v6: `name` is free text of at most 60 characters; v2: at most 40 of `a-z 0-9 _ -`';

/**
 * The bodies of operations whose controllers read `@Body()` untyped (checked by hand, or by
 * API version), by operationId: the scanner cannot describe those.
 */
export const REQUEST_BODIES: Readonly<Record<string, RequestBodyObject>> = {
  SendMessage_send: messageBody,
  CreateRoom_create: {
    ...byVersion('CreateRoomDto', 'V2CreateRoomDto', roomNames),
    required: false,
    description: 'No body makes a public room with a generated name',
  },
  UpdateRoom_update: byVersion('RoomFieldsDto', 'V2RoomFieldsDto', roomNames),
  EditMessage_edit: messageBody,
  ReplyToMessage_reply: json({
    allOf: [
      { $ref: '#/components/schemas/V6MessageBodyDto' },
      { type: 'object', properties: { also_in_room: { type: 'boolean', default: false, description: "Show the reply in the room's messages and subscriptions too" } } },
    ],
    description: 'A v6 message, and whether it shows in the room too',
  }),
  IssueTestToken_issue: {
    required: false,
    description: '`user_id` may come in the query string instead',
    content: {
      'application/json': { schema: { type: 'object', properties: { grant_type: { type: 'string', enum: ['client_credentials'] }, user_id: { type: 'string' } } } },
      'application/x-www-form-urlencoded': { schema: { type: 'object', properties: { grant_type: { type: 'string', enum: ['client_credentials'] }, user_id: { type: 'string' } } } },
    },
  },
  CreateRole_create: json({
    type: 'object',
    required: ['name', 'scope', 'permissions'],
    properties: { name: { type: 'string' }, scope: { type: 'string', enum: ['global', 'room'] }, permissions: strings },
  }),
  AssignUserRole_assign: json({
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string' }, room_id: { type: 'string', description: 'Absent: the global role' } },
  }),
  UpdateRolePermissions_update: json({ type: 'object', properties: { add_permissions: strings, remove_permissions: strings } }),
  RoomBans_ban: { ...banTerms, required: false },
  InstanceBans_ban: { ...banTerms, required: false },
  PublishItems_publish: json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: {} } } }),
};
