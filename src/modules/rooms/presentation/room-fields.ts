import { IsBoolean, IsObject, IsOptional, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

/** Seed limit: at most 40 characters of lowercase letters, digits, `_` and `-`. */
export const ROOM_NAME = /^[a-z0-9_-]{1,40}$/;
export const ROOM_NAME_MESSAGE = 'name: at most 40 characters, only lowercase letters, digits, "_" and "-"';

/** The fields a room can be created or updated with. */
export class RoomFieldsDto {
  @IsOptional()
  @IsString()
  @Matches(ROOM_NAME, { message: ROOM_NAME_MESSAGE })
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
