/**
 * The part of OpenAPI 3.1 (https://spec.openapis.org/oas/v3.1.0) this service's document uses.
 * Schemas are JSON Schema 2020-12, which 3.1 adopts as is.
 */
export interface Schema {
  readonly $ref?: string;
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'null';
  readonly format?: string;
  readonly description?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly items?: Schema;
  readonly const?: string | number;
  readonly enum?: readonly string[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly examples?: readonly unknown[];
  readonly oneOf?: readonly Schema[];
}

export interface Header {
  readonly description: string;
  readonly required?: boolean;
  readonly schema: Schema;
}

export interface MediaType {
  readonly schema: Schema;
}

/**
 * A Link Object (OpenAPI 3.1 §4.8.20): how a value of this answer feeds another operation's
 * parameter (a runtime expression such as `$response.body#/data/id`).
 */
export interface Link {
  readonly operationId: string;
  readonly parameters: Readonly<Record<string, string>>;
  readonly description: string;
}

export interface Response {
  readonly $ref?: never;
  readonly description: string;
  readonly headers?: Readonly<Record<string, Header>>;
  readonly content?: Readonly<Record<string, MediaType>>;
  readonly links?: Readonly<Record<string, Link>>;
}

/** A Reference Object (OpenAPI 3.1 §4.8.23) to an entry of `components.responses`. */
export interface ResponseRef {
  readonly $ref: string;
  readonly description?: never;
  readonly headers?: never;
  readonly content?: never;
  readonly links?: never;
}

export interface Parameter {
  readonly name: string;
  readonly in: 'path' | 'header' | 'query';
  readonly required: boolean;
  readonly description: string;
  readonly schema: Schema;
}

export interface RequestBody {
  readonly required: boolean;
  readonly description: string;
  readonly content: Readonly<Record<string, MediaType>>;
}

/** Each entry: a scheme name mapped to the scopes it needs (none for these schemes). */
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** `[]`: public. Several entries: any one of them suffices. */
  readonly security: readonly SecurityRequirement[];
  readonly parameters?: readonly Parameter[];
  readonly requestBody?: RequestBody;
  readonly responses: Readonly<Record<string, Response | ResponseRef>>;
}

export const OPERATION_METHODS = ['get', 'head', 'post', 'put', 'delete', 'patch', 'options'] as const;
export type OperationMethod = (typeof OPERATION_METHODS)[number];

export type PathItem = Readonly<Partial<Record<OperationMethod, Operation>>>;

export interface SecurityScheme {
  readonly type: 'apiKey' | 'http';
  readonly description: string;
  readonly name?: string;
  readonly in?: 'header' | 'query';
  readonly scheme?: 'bearer';
  readonly bearerFormat?: string;
}

/** Where the operations are served (OpenAPI 3.1 §4.8.5): a relative URL is resolved against the document's own URL. */
export interface Server {
  readonly url: string;
  readonly description: string;
}

/** An OpenAPI 3.1 document, typed as far as this service's document needs. */
export interface OpenApiDocument {
  readonly openapi: '3.1.0';
  readonly info: {
    readonly title: string;
    readonly version: string;
    readonly description: string;
    /** OpenAPI 3.1 §4.8.4: `identifier` is an SPDX expression. */
    readonly license: { readonly name: string; readonly identifier: string };
  };
  readonly servers: readonly Server[];
  readonly paths: Readonly<Record<string, PathItem>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, Schema>>;
    readonly responses: Readonly<Record<string, Response>>;
    readonly securitySchemes: Readonly<Record<string, SecurityScheme>>;
  };
}
