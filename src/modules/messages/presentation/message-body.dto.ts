import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  ValidateNested,
} from '../../../shared/http/class-validator-parts';
import { V2_ATTACHMENT_KINDS, V2AttachmentKind } from '../domain/message-parts';

class V2AttachmentDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(2000)
  resource_link: string;

  @IsIn(V2_ATTACHMENT_KINDS as string[])
  type: V2AttachmentKind;

  /** chatkit-client sends the files API's answer as-is, name included. */
  @IsOptional()
  @IsString()
  @MaxLength(255)
  name?: string;
}

/** The seed's (v2) message: text and an optional link attachment. */
export class V2MessageBodyDto {
  @IsString()
  text: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => V2AttachmentDto)
  attachment?: V2AttachmentDto;
}

class AttachmentRefDto {
  @IsString()
  @IsNotEmpty()
  id: string;
}

const MIME = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+*-]+(\s*;.*)?$/;

/** One v6 part: exactly one of `content`, `url` and `attachment` (checked by the use case). */
export class MessagePartDto {
  @IsString()
  @Matches(MIME, { message: 'parts: each type must be a MIME type such as text/plain' })
  type: string;

  @IsOptional()
  @IsString()
  content?: string;

  @IsOptional()
  @IsString()
  @MaxLength(2000)
  url?: string;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => AttachmentRefDto)
  attachment?: AttachmentRefDto;
}

export const MAX_PARTS = 20;

/** chatkit v6 (multipart) message. */
export class V6MessageBodyDto {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PARTS)
  @ValidateNested({ each: true })
  @Type(() => MessagePartDto)
  parts: MessagePartDto[];
}
