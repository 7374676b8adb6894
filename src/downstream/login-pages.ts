/**
 * D2, D3, D4: what a login's browser is answered: the redirect it comes back to and what that
 * answer settles ({@link callbackAnswer}), the page it shows and the headers of every login page.
 */

/** What the browser came back with. */
export interface LoginCallback {
  readonly code: string;
  readonly iss?: string;
}

/**
 * Where the browser comes back to: the redirect URI registered and sent, and the answer it
 * brings for one login's `state` (an answer with another state never settles it).
 */
export interface LoginRedirect {
  readonly url: string;
  /** Rejects when the authorization server answered with an error. */
  answer(state: string): Promise<LoginCallback>;
  /** The login is over (done, failed or timed out): stop waiting. */
  close(): Promise<void>;
}

/**
 * D4: the headers of every login page: no script, style, frame or form of anyone's runs there,
 * and the URL (which holds a code) is not sent on as a referrer.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/** The page the browser shows at the end; `text` (which may quote the authorization server) escaped. */
export const PAGE = (text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>mcp-normalizer</title><p>${text.replace(
    /[&<>"']/g,
    (c) => `&#${c.charCodeAt(0)};`,
  )}</p>`;

/**
 * D2, D3: the browser's return to a redirect URI: the login waiting for its `state` is settled
 * (a code, or the authorization server's error); an unknown state is refused and changes nothing.
 * @returns the status and the page to answer with
 */
export function callbackAnswer(
  url: URL,
  server: string | ((state: string) => string | undefined),
  waiting: Map<string, { resolve(callback: LoginCallback): void; reject(error: Error): void }>,
): { status: number; page: string } {
  const state = url.searchParams.get('state') ?? '';
  const login = waiting.get(state);
  const name = typeof server === 'string' ? server : server(state);
  if (login === undefined || name === undefined)
    // Not a login in progress (a stale tab, a forged link): refused, and the login goes on waiting.
    return { status: 400, page: PAGE('This answer does not belong to a login in progress.') };
  waiting.delete(state);
  const error = url.searchParams.get('error');
  const code = url.searchParams.get('code');
  if (error !== null || code === null) {
    const why = error === null ? 'no code' : `${error}${describe(url.searchParams.get('error_description'))}`;
    // D4: what reaches the caller (and its model) is the error code alone, never the server's prose.
    const said = error === null ? 'no code' : /^[\w.-]{1,64}$/.test(error) ? error : 'an error';
    login.reject(new Error(`the authorization server answered ${said}`));
    return { status: 400, page: PAGE(`The login to ${name} failed: ${why}.`) };
  }
  const iss = url.searchParams.get('iss');
  login.resolve({ code, ...(iss !== null ? { iss } : {}) });
  return { status: 200, page: PAGE(`Logged in to ${name}. You can close this tab.`) };
}

function describe(text: string | null): string {
  return text === null || text === '' ? '' : ` (${text})`;
}
