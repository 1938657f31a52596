// api.js: the dashboard's only way to allotd: the session (an access token
// kept in sessionStorage, never in a cookie), JSON requests with the bearer
// token, and errors as ApiError {method, path, status, message, details}.
// A 401, or a token past its exp, ends the session and calls the handler
// registered with onSessionEnd (the app shows the login form). The
// refresh token that came with the access token renews it
// (refreshSession; app.js does so while the tab is in use).

const KEY = 'allot.session';
let session = null;
let endHandler = () => {};

export class ApiError extends Error {
  constructor(method, path, status, message, details) {
    super(message);
    this.method = method;
    this.path = path;
    this.status = status;
    this.details = details || '';
  }
}

// The claims of a JWT (not verified: the server does that), or {}.
function claims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part.padEnd(part.length + ((4 - (part.length % 4)) % 4), '=')));
  } catch {
    return {};
  }
}

export function currentSession() {
  if (session) return session;
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    if (s && s.token) session = s;
  } catch {
    session = null;
  }
  return session;
}

export function sessionExpired() {
  const s = currentSession();
  return !!(s && s.exp && s.exp * 1000 <= Date.now());
}

export function onSessionEnd(fn) {
  endHandler = fn;
}

export function endSession(message) {
  session = null;
  sessionStorage.removeItem(KEY);
  endHandler(message || '');
}

const EXPIRED = 'Your session has expired or was revoked. Log in again.';

// The reply as JSON when it says it is JSON; otherwise {raw, message}.
async function parse(res) {
  const text = await res.text();
  if (!text) return null;
  if (/json/i.test(res.headers.get('Content-Type') || '')) {
    try {
      return JSON.parse(text);
    } catch { /* fall through: shown as text */ }
  }
  return {raw: text, message: text.slice(0, 200)};
}

// One request. body: an object sent as JSON. Resolves to the parsed reply.
export async function api(method, path, body, opts = {}) {
  const s = currentSession();
  if (!s) throw new ApiError(method, path, 401, 'Not logged in');
  if (sessionExpired()) {
    endSession(EXPIRED);
    throw new ApiError(method, path, 401, 'Session expired');
  }
  const headers = {Authorization: `Bearer ${s.token}`, Accept: 'application/json'};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {method, headers, signal: opts.signal, cache: 'no-store',
      body: body === undefined ? undefined : JSON.stringify(body)});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(method, path, 0, 'Network error: the server did not answer', e.message);
  }
  const data = await parse(res);
  if (res.status === 401) {
    endSession(EXPIRED);
    throw new ApiError(method, path, 401, 'Unauthorized', data && data.details);
  }
  if (!res.ok) {
    const msg = (data && (data.message || data.error)) || res.statusText || 'Error';
    const details = data && (data.details || data.error_description);
    if (res.status === 429) {
      const wait = res.headers.get('Retry-After');
      throw new ApiError(method, path, 429, 'Too many requests', wait ? `retry in ${wait}s` : '');
    }
    throw new ApiError(method, path, res.status, msg, details);
  }
  return data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);

// get() for what a page can do without: a failure resolves to {error}
// (an abort still rejects, so a cancelled refresh stops).
export const getOptional = (path, signal) => get(path, {signal}).catch((e) => {
  if (e.name === 'AbortError') throw e;
  return {error: e};
});

// Throws an AbortError if signal was aborted: a page checks this after
// awaiting requests whose failures it tolerates, before drawing.
export function checkAbort(signal) {
  if (signal && signal.aborted) throw new DOMException('The refresh was cancelled', 'AbortError');
}

// Builds "path?k=v&..." leaving out empty values; arrays are joined by ','.
export function withQuery(path, params) {
  const q = [];
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length)) continue;
    q.push(`${encodeURIComponent(k)}=${encodeURIComponent(Array.isArray(v) ? v.join(',') : v)}`);
  }
  return q.length ? `${path}?${q.join('&')}` : path;
}

// Logs in with the password grant; stores the session on success.
export async function login(username, password) {
  let res;
  try {
    res = await fetch('/api/v1/token', {method: 'POST', cache: 'no-store',
      headers: {'Content-Type': 'application/json', Accept: 'application/json'},
      body: JSON.stringify({grantType: 'password', username, password})});
  } catch (e) {
    throw new ApiError('POST', '/api/v1/token', 0, 'Network error: the server did not answer');
  }
  const data = await parse(res);
  if (!res.ok || !data || !data.accessToken) {
    const msg = res.status === 400 || res.status === 401 ? 'Wrong user name or password'
      : (data && data.message) || res.statusText;
    throw new ApiError('POST', '/api/v1/token', res.status, msg,
      res.status === 400 || res.status === 401 ? '' : data && data.details);
  }
  keep(data, username);
  return session;
}

// Stores the session of a token reply: the access token, its expiry and
// lifetime, and the refresh token that renews it.
function keep(data, username) {
  const c = claims(data.accessToken);
  session = {token: data.accessToken, user: c.preferred_username || username,
    exp: c.exp || Math.floor(Date.now() / 1000) + (data.expiresIn || 3600),
    ttl: Number(data.expiresIn) || 3600, refresh: data.refreshToken || ''};
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

// Renews the session with its refresh token (POST /api/v1/token, grant
// refresh_token: a refresh token is good once, the reply carries the
// next). One renewal at a time; rejects with an ApiError when the server
// refuses (the session then runs to its expiry).
let renewing = null;
export function refreshSession() {
  if (renewing) return renewing;
  const s = currentSession();
  if (!s || !s.refresh) return Promise.reject(new ApiError('POST', '/api/v1/token', 400, 'No refresh token'));
  renewing = (async () => {
    let res;
    try {
      res = await fetch('/api/v1/token', {method: 'POST', cache: 'no-store',
        headers: {'Content-Type': 'application/json', Accept: 'application/json'},
        body: JSON.stringify({grantType: 'refresh_token', refreshToken: s.refresh})});
    } catch (e) {
      throw new ApiError('POST', '/api/v1/token', 0, 'Network error: the server did not answer');
    }
    const data = await parse(res);
    if (!res.ok || !data || !data.accessToken) {
      throw new ApiError('POST', '/api/v1/token', res.status, (data && data.message) || res.statusText,
        data && data.details);
    }
    if (currentSession() !== s) return session; // logged out meanwhile
    keep(data, s.user);
    return session;
  })().finally(() => { renewing = null; });
  return renewing;
}
