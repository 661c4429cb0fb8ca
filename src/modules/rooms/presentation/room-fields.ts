import { ArrayMaxSize, IsArray, IsBoolean, IsNotEmpty, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateIf } from '../../../shared/http/class-validator-parts';
import { MaxCharacters } from '../../../shared/http/max-characters';

/**
 * v6 room names are free text, as apps using the SDKs name rooms (`Alice's room`), up to
 * Chatkit's limit (its FAQ: "Max room name length: 60 characters").
 */
export const MAX_ROOM_NAME_CHARACTERS = 60;
/** v2 keeps the seed's rule: at most 40 characters of lowercase letters, digits, `_` and `-`. */
export const V2_ROOM_NAME = /^[a-z0-9_-]{1,40}$/;
const V2_ROOM_NAME_MESSAGE = 'name: at most 40 characters, only lowercase letters, digits, "_" and "-" (through v2; v6 takes free text)';

/** The v2 rule, on the name of the v2 bodies. */
const V2RoomName = (): PropertyDecorator => Matches(V2_ROOM_NAME, { message: V2_ROOM_NAME_MESSAGE });

export const MAX_INITIAL_MEMBERS = 500;

/** The fields a room can be updated with (v6). */
export class RoomFieldsDto {
  @IsOptional()
  @IsString()
  @MaxCharacters(MAX_ROOM_NAME_CHARACTERS, { message: `name: at most ${MAX_ROOM_NAME_CHARACTERS} characters` })
  name?: string;

  @IsOptional()
  @IsBoolean()
  private?: boolean;

  @IsOptional()
  @IsObject()
  custom_data?: Record<string, unknown>;

  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MaxLength(200)
  push_notification_title_override?: string | null;
}

/** The same through v2. */
export class V2RoomFieldsDto extends RoomFieldsDto {
  @V2RoomName()
  declare name?: string;
}

/** The fields a room is created with (v6). */
export class CreateRoomDto extends RoomFieldsDto {
  /** v6 only: a caller-chosen id. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(160)
  id?: string;

  /** chatkit-client names the creator here; chatkit-server names it with the token's `sub`. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  created_by_id?: string;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_INITIAL_MEMBERS)
  @IsString({ each: true })
  user_ids?: string[];
}

/** The same through v2. */
export class V2CreateRoomDto extends CreateRoomDto {
  @V2RoomName()
  declare name?: string;
}
