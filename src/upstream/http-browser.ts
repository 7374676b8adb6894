/**
 * D3, D4: the paths a person's browser comes to while logging in to a downstream server for a
 * caller (the gateway's link, the sign-in's return, the authorization server's callback). A
 * browser carries no bearer token: these are answered past Host/Origin, before the token check,
 * with a page or a redirect that the app's logins (app/logins/logins.ts) decide.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** One answer to a browser: a page or a redirect, with its headers. */
export interface BrowserPage {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly page?: string;
}

/** The browser's side of callers' logins. */
export interface BrowserLogin {
  readonly paths: readonly string[];
  /** The answer at `path`; undefined: not one of its own after all. */
  answer(path: string, url: URL, cookie: string | undefined): Promise<BrowserPage | undefined>;
}

/** Answers `req` when it came to one of `browser`'s paths; false when it did not. */
export async function answerBrowser(
  browser: BrowserLogin | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
): Promise<boolean> {
  if (browser === undefined || path === undefined || !browser.paths.includes(path)) return false;
  const answer = await browser.answer(path, new URL(req.url ?? '/', 'http://gateway'), req.headers.cookie);
  if (answer === undefined) return false;
  res.writeHead(answer.status, answer.headers as Record<string, string | string[]>);
  res.end(answer.page);
  return true;
}
