import { IsNotEmpty, IsObject, IsOptional, IsString, MaxLength } from '../../../shared/http/class-validator-parts';

export const USER_ID_MAX = 160;

/** A user as callers create it (POST /users and each entry of POST /batch_users). */
export class NewUserDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(USER_ID_MAX)
  id: string;

  @IsString()
  @MaxLength(500)
  name: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  avatar_url?: string;

  @IsOptional()
  @IsObject()
  custom_data?: Record<string, unknown>;
}
