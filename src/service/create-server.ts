import { serveApp, type AppServer, type TransportOptions } from '../transport/http-server.ts';
import { createApp, type App, type AppOptions } from './app.ts';

/** What createServer needs: everything createApp takes (the transport limits among them), plus TLS. */
export interface ServerOptions extends AppOptions, Pick<TransportOptions, 'tls'> {}

/** A `node:http` (or `node:https`) server serving the catalogue, with a graceful `shutdown`. */
export type CatalogueServer = AppServer<App>;

/** An `http.Server` (or `https.Server` when `tls` is given) serving the catalogue, ready to `listen`. */
export function createServer(options: ServerOptions): CatalogueServer {
  const { tls, ...appOptions } = options;
  const app = createApp(appOptions);
  return serveApp(app, {
    ...(tls !== undefined && { tls }),
    ...(appOptions.limits !== undefined && { limits: appOptions.limits }),
    ...(appOptions.logger !== undefined && { logger: appOptions.logger }),
    ...(appOptions.now !== undefined && { now: appOptions.now }),
    connectionEvents: appOptions.metrics?.connections,
    memoryBudget: app.memoryBudget,
    hasValidToken: app.hasValidToken,
  });
}
