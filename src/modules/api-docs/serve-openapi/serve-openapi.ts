import { Controller, Get } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { OPENAPI_ROUTE, OpenApiDocument } from '../openapi-document';

/** GET /openapi.json: the OpenAPI 3 document of every route, to anyone (it holds no secret). */
@Controller(OPENAPI_ROUTE)
export class ServeOpenApiController {
  constructor(private readonly document: OpenApiDocument) {}

  @Get()
  serve(): OpenAPIObject {
    return this.document.get();
  }
}
