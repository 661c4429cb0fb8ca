import { Module } from '@nestjs/common';
import { OpenApiDocument } from './openapi-document';
import { ServeOpenApiController } from './serve-openapi/serve-openapi';

/** The OpenAPI document of every route, built at the first GET /openapi.json and served there. */
@Module({ controllers: [ServeOpenApiController], providers: [OpenApiDocument], exports: [OpenApiDocument] })
export class ApiDocsModule {}
