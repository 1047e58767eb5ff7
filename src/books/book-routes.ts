import { readJsonObject } from '../http/body.ts';
import { ANSWERS, refusal } from '../http/messages.ts';
import { answer, IF_MATCH, IF_NONE_MATCH_WRITE, jsonBody, NO_ROUTE, PRECONDITION_FAILED, PROTECTED, ref, TOO_LARGE, TRANSPORT, UNAUTHORIZED } from '../http/openapi-operations.ts';
import type { Header, Link, Parameter, Schema } from '../http/openapi-types.ts';
import { envelopeReply } from '../http/respond.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import { bookJson } from '../model/book.ts';
import { MAX_BOOK_ID, MAX_TEXT_LENGTH, MAX_YEAR, MIN_YEAR, validFields, validPatch } from '../model/valid-book.ts';
import { whenCaughtUp, type BookStore } from '../store/book-store.ts';
import { parseBookId } from './book-id.ts';
import { BookEtags, bookEtag, writeCondition } from './etag.ts';
import { LIST_BOOKS } from './list-route.ts';

/** What the book routes need (docs/contract.md, "Books"). */
export interface BookRouteDeps {
  readonly store: BookStore;
  /** What `Link` targets start with: `''` at the root, createApp's `mountPath` without its final `/` when mounted. */
  readonly linkBase: string;
}

const text = (what: string): Schema => ({
  type: 'string',
  minLength: 1,
  maxLength: MAX_TEXT_LENGTH,
  pattern: '\\S',
  description: `${what}: not blank, at most ${MAX_TEXT_LENGTH} Unicode code points, stored exactly as given.`,
});
const year: Schema = { type: 'integer', minimum: MIN_YEAR, maximum: MAX_YEAR, description: 'An integer value (2020, 2020.0 and 2e3 all are).' };

/** The schemas the book operations refer to (docs/contract.md, "Books"). */
export const BOOK_SCHEMAS: Readonly<Record<string, Schema>> = {
  Book: {
    type: 'object',
    required: ['id', 'title', 'author', 'year'],
    properties: { id: { type: 'integer', minimum: 1, maximum: MAX_BOOK_ID }, title: text('Title'), author: text('Author'), year },
  },
  BookInput: { type: 'object', required: ['title', 'author', 'year'], properties: { title: text('Title'), author: text('Author'), year } },
  BookPatch: { type: 'object', properties: { title: text('Title'), author: text('Author'), year } },
};

const ETAG: Header = {
  description: 'Strong entity tag of the book (RFC 9110 §8.8.3): send it back in If-Match to make a write conditional, or in If-None-Match to get 304 while your copy is current.',
  required: true,
  schema: { type: 'string' },
};
const ID: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A book id. Any decimal digits naming a safe integer are accepted (`007` is 7); anything else is 400 `Invalid book id`.',
  schema: { type: 'integer', minimum: 1, maximum: MAX_BOOK_ID },
};
const BOOK_NOT_FOUND = answer(404, [ANSWERS.bookNotFound.message]);
const LOCATION: Header = {
  description: 'The new book\'s path, `/book/{id}`, under the mount path when the catalogue is mounted (RFC 9110 §15.3.2).',
  required: true,
  schema: { type: 'string' },
};
/** Every id up to 2^53 − 1 was given and none is reused: no book can be created (docs/contract.md, "Books"). */
const IDS_EXHAUSTED = answer(507, [ANSWERS.bookIdsExhausted.message]);
/** OpenAPI links (§4.8.20): the created book's id, for the calls that name it, so a client or tester can chain them. */
const CREATED_BOOK_LINKS: Readonly<Record<string, Link>> = {
  getBook: { operationId: 'getBook', parameters: { id: '$response.body#/data/id' }, description: 'The book just created.' },
  updateBook: { operationId: 'updateBook', parameters: { id: '$response.body#/data/id' }, description: 'Update the book just created.' },
  deleteBook: { operationId: 'deleteBook', parameters: { id: '$response.body#/data/id' }, description: 'Delete the book just created.' },
};

/** POST /book (docs/contract.md, "Books"). */
const CREATE_BOOK = defineRoute({
  method: 'POST',
  pattern: '/book',
  pathName: 'book',
  auth: true,
  operation: {
    operationId: 'createBook',
    summary: 'Create a book; the service assigns its id',
    tags: ['books'],
    security: PROTECTED,
    requestBody: jsonBody('`id` and unknown keys are ignored.', ref('BookInput')),
    responses: {
      '201': { ...answer(201, [ANSWERS.bookCreated.message], ref('Book'), { ETag: ETAG, Location: LOCATION }), links: CREATED_BOOK_LINKS },
      '400': answer(400, [ANSWERS.invalidInput.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      ...NO_ROUTE,
      '413': TOO_LARGE,
      ...TRANSPORT,
      '507': IDS_EXHAUSTED,
    },
  },
  handler: ({ store, linkBase }: BookRouteDeps) =>
    async ({ req }): Promise<Reply> => {
      const fields = validFields(await readJsonObject(req, 'invalidInput'));
      const book = await store.create(fields);
      const json = bookJson(book);
      return envelopeReply(ANSWERS.bookCreated, json, { etag: bookEtag(json), location: `${linkBase}/book/${book.id}` });
    },
});

/** GET /book/{id} (docs/contract.md, "Books"). */
const GET_BOOK = defineRoute({
  method: 'GET',
  pattern: '/book/{id}',
  pathName: 'bookById',
  auth: true,
  operation: {
    operationId: 'getBook',
    summary: 'One book',
    tags: ['books'],
    security: PROTECTED,
    parameters: [ID],
    responses: {
      '200': answer(200, [ANSWERS.bookRetrieved.message], ref('Book'), { ETag: ETAG }),
      '400': answer(400, [ANSWERS.invalidBookId.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      '404': BOOK_NOT_FOUND,
      ...TRANSPORT,
    },
  },
  handler: ({ store }: BookRouteDeps) => {
    const etags = new BookEtags();
    return ({ params }): Reply | Promise<Reply> => {
      const id = parseBookId(params.id);
      return whenCaughtUp(store, () => {
        const json = store.getJson(id);
        if (json === undefined) throw refusal('bookNotFound');
        return envelopeReply(ANSWERS.bookRetrieved, json, { etag: etags.etag(id, json) });
      });
    };
  },
});

/** PUT /book/{id} (docs/contract.md, "Books" and "Conditional requests"). */
const UPDATE_BOOK = defineRoute({
  method: 'PUT',
  pattern: '/book/{id}',
  auth: true,
  operation: {
    operationId: 'updateBook',
    summary: 'Update a book: absent fields keep their value, `{}` changes nothing',
    description:
      'A PUT that changes nothing (`{}`, or only the values the book has) writes nothing and publishes no change: ' +
      '200 with the book and the same ETag. `If-None-Match: *` is 412 for a book that exists.',
    tags: ['books'],
    security: PROTECTED,
    parameters: [ID, IF_MATCH, IF_NONE_MATCH_WRITE],
    requestBody: jsonBody('Each field present must pass the rule of POST /book.', ref('BookPatch')),
    responses: {
      '200': answer(200, [ANSWERS.bookUpdated.message], ref('Book'), { ETag: ETAG }),
      '400': answer(400, [ANSWERS.invalidBookId.message, ANSWERS.invalidInput.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      '404': BOOK_NOT_FOUND,
      '412': PRECONDITION_FAILED,
      '413': TOO_LARGE,
      ...TRANSPORT,
    },
  },
  handler: ({ store }: BookRouteDeps) =>
    async ({ req, params }): Promise<Reply> => {
      const id = parseBookId(params.id);
      // docs/contract.md, "Books": the look-up happens before the body is read.
      // Awaited only when there is something to wait for: an await of undefined still costs a microtask.
      const waiting = store.caughtUp();
      if (waiting !== undefined) await waiting;
      if (store.getJson(id) === undefined) throw refusal('bookNotFound');
      const patch = validPatch(await readJsonObject(req, 'invalidInput'));
      // The condition is checked by the store against the state this write replaces: 404, then 412.
      const book = await store.update(id, patch, writeCondition(req));
      if (book === undefined) throw refusal('bookNotFound');
      const json = bookJson(book);
      return envelopeReply(ANSWERS.bookUpdated, json, { etag: bookEtag(json) });
    },
});

/** DELETE /book/{id} (docs/contract.md, "Books" and "Conditional requests"). */
const DELETE_BOOK = defineRoute({
  method: 'DELETE',
  pattern: '/book/{id}',
  auth: true,
  operation: {
    operationId: 'deleteBook',
    summary: 'Delete a book; its id is never reused',
    tags: ['books'],
    security: PROTECTED,
    parameters: [ID, IF_MATCH, IF_NONE_MATCH_WRITE],
    responses: {
      '200': answer(200, [ANSWERS.bookDeleted.message]),
      '400': answer(400, [ANSWERS.invalidBookId.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      '404': BOOK_NOT_FOUND,
      '412': PRECONDITION_FAILED,
      ...TRANSPORT,
    },
  },
  handler: ({ store }: BookRouteDeps) =>
    async ({ req, params }): Promise<Reply> => {
      const id = parseBookId(params.id);
      if (!(await store.remove(id, writeCondition(req)))) throw refusal('bookNotFound');
      return envelopeReply(ANSWERS.bookDeleted, 'null');
    },
});

/** The book routes (docs/contract.md, "Books"), in the order the document lists them. */
export const BOOK_ROUTES = [CREATE_BOOK, LIST_BOOKS, GET_BOOK, UPDATE_BOOK, DELETE_BOOK] as const;
