import { HttpError, MESSAGES } from '../errors.ts';
import { readJsonObject } from '../http/body.ts';
import type { RouteDefinition } from '../http/router.ts';
import type { Reply, Route } from '../http/route.ts';
import type { BookStore } from '../store/store.ts';
import { bookJson } from './model.ts';
import { parseBookFields, parseBookId, parseBookPatch } from './validate.ts';

const NOT_FOUND = (): HttpError => new HttpError(404, MESSAGES.bookNotFound);

/** spec §4.2–4.6 with the rules decisions.md settles. */
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
          return { status: 201, message: MESSAGES.bookCreated, data: bookJson(book) };
        },
      },
    },
    {
      method: 'GET',
      pattern: '/books',
      handler: { auth: true, handle: () => ({ status: 200, message: MESSAGES.booksRetrieved, data: store.listJson() }) },
    },
    {
      method: 'GET',
      pattern: '/book/{id}',
      handler: {
        auth: true,
        handle({ params }): Reply {
          const json = store.getJson(parseBookId(params[0] as string));
          if (json === undefined) throw NOT_FOUND();
          return { status: 200, message: MESSAGES.bookRetrieved, data: json };
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
          // spec §4.5.1: the look-up happens before the body is read.
          if (store.get(id) === undefined) throw NOT_FOUND();
          const patch = parseBookPatch(await readJsonObject(req, MESSAGES.invalidInput));
          const book = await store.update(id, patch);
          if (book === undefined) throw NOT_FOUND();
          return { status: 200, message: MESSAGES.bookUpdated, data: bookJson(book) };
        },
      },
    },
    {
      method: 'DELETE',
      pattern: '/book/{id}',
      handler: {
        auth: true,
        async handle({ params }): Promise<Reply> {
          if (!(await store.remove(parseBookId(params[0] as string)))) throw NOT_FOUND();
          return { status: 200, message: MESSAGES.bookDeleted, data: 'null' };
        },
      },
    },
  ];
}
