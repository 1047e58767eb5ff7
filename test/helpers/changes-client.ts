import type { TestApp } from './app.ts';

/** A change as GET /changes and the /events frames carry it (docs/contract.md, "Change feed"). */
export interface WireChange {
  seq: number;
  type: string;
  id: number;
  book: { id: number; title: string; author: string; year: number } | null;
}

/** GET /changes`query` (e.g. `?since=3&limit=2`): its envelope's parts, its headers and their Link. */
export async function changes(app: TestApp, query: string): Promise<{ status: number; message: string; data: WireChange[]; headers: Headers; link: string | null }> {
  const res = await app.request('GET', `/changes${query}`);
  return { status: res.status, message: res.json.message, data: res.json.data as WireChange[], headers: res.headers, link: res.headers.get('link') };
}
