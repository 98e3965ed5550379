// Shared pieces of the dashboard's pages: Preact + htm, the /api client (the session cookie plus the CSRF token on
// writes), a tiny router over the History API, and formatting in the viewer's own timezone.
import { h, render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';

export const html = htm.bind(h);
export { h, render, useCallback, useEffect, useRef, useState };

const csrf = document.querySelector('meta[name="csrf-token"]')?.getAttribute('content') ?? '';
export const csrfToken = () => csrf;

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** Calls `/api<path>` as the signed-in key. Answers the parsed JSON (or null); throws ApiError with the API's own message. */
export async function api(path, opts = {}) {
  return (await apiWithHeaders(path, opts)).data;
}

/** A list page: its items and the X-Total-Count the API answers when a limit is given. */
export async function apiPage(path) {
  const { data, headers } = await apiWithHeaders(path);
  const total = Number(headers.get('x-total-count'));
  return { items: data ?? [], total: Number.isFinite(total) && headers.has('x-total-count') ? total : (data ?? []).length };
}

async function apiWithHeaders(path, { method = 'GET', body } = {}) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/api${path}`, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 401) {
    location.assign(`/dashboard/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
    throw new ApiError(401, 'signed out');
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!res.ok) throw new ApiError(res.status, (data && typeof data === 'object' && data.error) || `${res.status} ${res.statusText}`);
  return { data, headers: res.headers };
}

let who;
/** Who is signed in (`/api/whoami`), asked once per page load. */
export const whoami = () => (who ??= api('/whoami'));
export const atLeastAdmin = (w) => w?.role === 'admin' || w?.role === 'owner';

/** Loads `fn()` when `deps` change (what was loaded for other deps is never handed out); `reload()` loads again, keeping it meanwhile. */
export function useLoad(fn, deps = []) {
  const key = JSON.stringify(deps);
  const [state, setState] = useState({ key: undefined, data: undefined, error: undefined, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => live && setState({ key, data, error: undefined, loading: false }),
      (error) => live && setState({ key, data: undefined, error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  if (state.key !== key) return { data: undefined, error: undefined, loading: true, reload };
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

// --- routing -----------------------------------------------------------------------------------------------------
const listeners = new Set();
export function navigate(path) {
  if (path === location.pathname + location.search) return;
  history.pushState(null, '', path);
  listeners.forEach((l) => l());
}
addEventListener('popstate', () => listeners.forEach((l) => l()));
export function useLocation() {
  const [loc, setLoc] = useState(location.pathname + location.search);
  useEffect(() => {
    const l = () => setLoc(location.pathname + location.search);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return loc;
}

/** An ordinary link (keyboard, middle-click and copy work) that changes page without a reload. */
export function Link({ href, children, ...rest }) {
  const onClick = (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return html`<a href=${href} onClick=${onClick} ...${rest}>${children}</a>`;
}

// --- formatting (the viewer's timezone and locale) ----------------------------------------------------------------
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
export const fmtDate = (iso) => (iso ? dateTime.format(new Date(iso)) : '—');
export const fmtTime = (iso) => (iso ? timeOnly.format(new Date(iso)) : '');
export const fmtNumber = (n) => new Intl.NumberFormat().format(n ?? 0);
export const fmtUsd = (n) => new Intl.NumberFormat(undefined, { style: 'currency', currency: 'USD' }).format(n ?? 0);
/** JSON for people: keys in a stable order, so a live event and its stored copy (jsonb reorders keys) read the same. */
const sortKeys = (v) => (Array.isArray(v) ? v.map(sortKeys) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])])) : v);
export const json = (v) => (typeof v === 'string' ? v : JSON.stringify(sortKeys(v), null, 2));

// --- small components -------------------------------------------------------------------------------------------
export function Status({ status }) {
  return html`<span class=${`status status-${status}`}>${status}</span>`;
}

export function ErrorNote({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message ?? String(error)}</p>`;
}

export function Loading({ what = 'Loading' }) {
  return html`<p class="muted" aria-live="polite">${what}…</p>`;
}

/** A page: its heading gets focus when the page opens, so a keyboard or screen-reader user starts there. */
export function Page({ title, actions, children }) {
  const ref = useRef(null);
  useEffect(() => {
    document.title = `${title} · svc`;
    ref.current?.focus({ preventScroll: true });
  }, [title]);
  return html`<section class="page">
    <header class="page-head"><h1 tabindex="-1" ref=${ref}>${title}</h1>${actions ? html`<div class="actions">${actions}</div>` : null}</header>
    ${children}
  </section>`;
}

/** Runs `action()` behind a button: disables it meanwhile and shows the API's error under it. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(undefined);
  const run = useCallback(async (action) => {
    setBusy(true);
    setError(undefined);
    try {
      return await action();
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}
