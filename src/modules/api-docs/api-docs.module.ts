import { Module } from '@nestjs/common';
import { OpenApiDocument } from './openapi-document';
import { ServeOpenApiController } from './serve-openapi/serve-openapi';

/** The OpenAPI document of every route, built at start (startServer) and served at GET /openapi.json. */
@Module({ controllers: [ServeOpenApiController], providers: [OpenApiDocument], exports: [OpenApiDocument] })
export class ApiDocsModule {}
