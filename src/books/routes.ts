import { HttpError, MESSAGES } from '../errors.ts';
import { readJsonObject } from '../http/body.ts';
import type { RouteDefinition } from '../http/router.ts';
import type { Reply, Route } from '../http/route.ts';
import type { BookStore } from '../store/store.ts';
import { bookEtag } from './etag.ts';
import { listRoute } from './list-route.ts';
import { bookJson } from './model.ts';
import { parseBookFields, parseBookId, parseBookPatch } from './validate.ts';

const NOT_FOUND = (): HttpError => new HttpError(404, MESSAGES.bookNotFound);

/** A book answer with its strong ETag (RFC 9110 §8.8.3), so a client can send it back in If-Match. */
function bookReply(status: number, message: Reply['message'], json: string): Reply {
  return { status, message, data: json, headers: { etag: bookEtag(json) } };
}

/** The book routes (docs/contract.md, "Books"). */
export function bookRoutes(store: BookStore): RouteDefinition<Route>[] {
  return [
    {
      method: 'POST',
      pattern: '/book',
      handler: {
        auth: true,
        async handle({ req }): Promise<Reply> {
          const fields = parseBookFields(await readJsonObject(req, MESSAGES.invalidInput));
          const book = await store.create(fields);
          return bookReply(201, MESSAGES.bookCreated, bookJson(book));
        },
      },
    },
    listRoute(store),
    {
      method: 'GET',
      pattern: '/book/{id}',
      handler: {
        auth: true,
        handle({ params }): Reply {
          const json = store.getJson(parseBookId(params[0] as string));
          if (json === undefined) throw NOT_FOUND();
          return bookReply(200, MESSAGES.bookRetrieved, json);
        },
      },
    },
    {
      method: 'PUT',
      pattern: '/book/{id}',
      handler: {
        auth: true,
        async handle({ req, params }): Promise<Reply> {
          const id = parseBookId(params[0] as string);
          // docs/contract.md, "Books": the look-up happens before the body is read.
          if (store.getJson(id) === undefined) throw NOT_FOUND();
          const patch = parseBookPatch(await readJsonObject(req, MESSAGES.invalidInput));
          // If-Match is checked by the store against the state this write replaces: 404, then 412.
          const book = await store.update(id, patch, req.headers['if-match']);
          if (book === undefined) throw NOT_FOUND();
          return bookReply(200, MESSAGES.bookUpdated, bookJson(book));
        },
      },
    },
    {
      method: 'DELETE',
      pattern: '/book/{id}',
      handler: {
        auth: true,
        async handle({ req, params }): Promise<Reply> {
          const id = parseBookId(params[0] as string);
          if (!(await store.remove(id, req.headers['if-match']))) throw NOT_FOUND();
          return { status: 200, message: MESSAGES.bookDeleted, data: 'null' };
        },
      },
    },
  ];
}
