import { Controller, Get } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { OPENAPI_ROUTE, OpenApiDocument } from '../openapi-document';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** GET /openapi.json: the OpenAPI 3 document of every route, to anyone (it holds no secret). */
@Controller(OPENAPI_ROUTE)
export class ServeOpenApiController {
  constructor(private readonly document: OpenApiDocument) {}

  @Get()
  @Requires(Access.public)
  serve(): OpenAPIObject {
    return this.document.get();
  }
}
