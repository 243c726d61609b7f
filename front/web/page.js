'use strict';
// The page of flower serve: the live event stream over a WebSocket (resumed
// from the last seq after a reconnect), the questions waiting for the
// person, the inbox, the oracle and the interrupt, all over the JSON API.
// Every request carries the token from the page's own address.
(() => {
  // The token comes in the address flower printed, once: it is kept in
  // this tab's sessionStorage and taken out of the address bar, so a reload
  // keeps working and the token stays out of the history.
  const given = new URLSearchParams(location.search).get('token');
  if (given) {
    try { sessionStorage.setItem('flower.token', given); } catch (_) { /* storage off: keep the address */ }
    if (sessionStorage.getItem('flower.token') === given) history.replaceState(null, '', location.pathname);
  }
  const token = given || sessionStorage.getItem('flower.token') || '';
  const $ = (id) => document.getElementById(id);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function api(path, body) {
    const init = { headers: { Authorization: 'Bearer ' + token } };
    if (body !== undefined) {
      init.method = 'POST';
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const r = await fetch(path, init);
    let j = {};
    try { j = await r.json(); } catch (_) { /* no body */ }
    if (!r.ok) throw new Error(j.error || r.status + ' ' + r.statusText);
    return j;
  }

  function feedback(id, text, bad) {
    const f = $(id);
    f.textContent = text;
    f.classList.toggle('bad', !!bad);
  }

  // ---- the banner facts, from the events --------------------------------

  const facts = { wake: null, step: null, context: 0, window: 0, cost: 0, stepCost: 0 };

  function usd(x) { return '$' + (x > 0 && x < 0.01 ? x.toPrecision(4).replace(/0+$/, '') : x.toFixed(x < 1 ? 4 : 2)); }

  function kilo(n) { return n < 1000 ? String(n) : (n / 1000).toFixed(1) + 'K'; }

  function renderFacts() {
    $('fact-wake').textContent = facts.wake ? String(facts.wake) : '—';
    $('fact-step').textContent = facts.step || '—';
    $('fact-cost').textContent = usd(facts.cost);
    $('fact-step-cost').textContent = facts.step ? usd(facts.stepCost) : '—';
    if (facts.context > 0) {
      let t = kilo(facts.context);
      const fill = $('fact-meter');
      if (facts.window > 0) {
        const pct = Math.min(100, (100 * facts.context) / facts.window);
        t += ' of ' + kilo(facts.window) + ' · ' + Math.round(pct) + '%';
        fill.style.width = pct + '%';
        fill.classList.toggle('high', pct >= 60 && pct < 85);
        fill.classList.toggle('full', pct >= 85);
      }
      $('fact-context').textContent = t;
    }
  }

  // While no wake runs, the controls that steer one are off: a note, an
  // interrupt or an oracle question would reach nothing.
  const steering = ['mail', 'mail-send', 'interrupt', 'interrupt-text', 'oracle-q', 'oracle-ask'];

  function setRunning(on) {
    for (const id of steering) $(id).disabled = !on;
    if (!on) arm(false);
  }

  function duration(s) {
    if (!(s >= 0)) return '';
    if (s < 60) return Math.round(s) + ' s';
    const m = Math.floor(s / 60);
    return m < 60 ? m + ' min ' + Math.round(s - 60 * m) + ' s' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }

  // ended shows the end state: the verdict, cost and duration in the header
  // and the next-wake panel.
  function ended(e, p) {
    const how = p.ok ? 'passed' : 'stopped';
    const parts = [usd(typeof p.cost === 'number' ? p.cost : facts.cost)];
    if (typeof p.duration_s === 'number') parts.push(duration(p.duration_s));
    facts.step = 'ended · ' + how;
    $('next-title').textContent = (p.ok ? 'The run passed' : 'The run stopped') + ' · ' + parts.join(' · ');
    $('next').classList.toggle('failed', !p.ok);
    $('next').dataset.verdict = how;
    $('next').hidden = false;
    setRunning(false);
  }

  // A step event's text is the step's name (seed 004); its payload's header
  // is the title line (n/total and how it started). Events of older builds
  // and the banner carry the line as their text.
  function stepTitle(e, p) {
    return (typeof p.header === 'string' && p.header ? p.header : e.text).replace(/^[─\s]+/, '');
  }

  function noteFacts(e) {
    const p = e.payload || {};
    if (e.kind === 'step' && p.ended) {
      ended(e, p);
      return;
    }
    if (e.kind === 'step' && p.banner) {
      $('next').hidden = true;
      setRunning(true);
      if (p.wake) facts.wake = p.wake;
      if (p.workspace) $('workspace').textContent = p.workspace;
    } else if (e.kind === 'step') {
      facts.step = stepTitle(e, p);
      facts.stepCost = 0;
    }
    if (!p.subagent && typeof p.context === 'number' && p.context > 0) {
      facts.context = p.context;
      if (p.window) facts.window = p.window;
    }
    if (e.kind === 'usage' && typeof p.cost === 'number') { facts.cost += p.cost; facts.stepCost += p.cost; }
  }

  // ---- the stream -------------------------------------------------------

  const stream = $('events');
  let last = 0; // the seq of the last event shown

  function firstLines(s, n) {
    const lines = s.replace(/\n+$/, '').split('\n');
    return { head: lines.slice(0, n).join('\n'), more: Math.max(0, lines.length - n), all: lines.join('\n') };
  }

  // item turns one event into an element, or null for events shown only
  // through the facts. Unknown kinds get a plain line: the set may grow.
  function item(e) {
    const p = e.payload || {};
    switch (e.kind) {
      case 'text': return el('div', 'ev text', e.text);
      case 'thinking': return el('div', 'ev thinking', firstLines(e.text, 4).head);
      case 'tool_call': {
        const d = el('div', 'ev tool');
        d.append(el('span', 'name', e.tool), document.createTextNode(e.text));
        return d;
      }
      case 'tool_result': {
        const t = firstLines(e.text || '(empty)', 2);
        const d = el('div', 'ev result' + (p.is_error ? ' error' : ''));
        if (t.more === 0) {
          d.append(el('pre', '', t.head));
        } else {
          const det = el('details');
          const sum = el('summary', '', t.head + '\n');
          sum.append(el('span', 'more', '… ' + t.more + ' more lines (click to show)'));
          det.append(sum, el('pre', '', t.all));
          d.append(det);
        }
        return d;
      }
      case 'step': {
        if (p.ended) return el('div', 'ev ended' + (p.ok ? '' : ' failed'), e.text);
        const d = el('div', 'ev step' + (p.banner ? ' banner' : ''), stepTitle(e, p));
        d.dataset.seq = e.seq;
        return d;
      }
      case 'ask': return askItem(e, p);
      case 'denied': return el('div', 'ev notice', 'Denied: ' + e.text);
      case 'error': return el('div', 'ev error', e.text);
      case 'retry': case 'handoff': case 'interrupt':
        return el('div', 'ev notice', e.text || e.kind);
      case 'reset': return el('div', 'ev meta', '— ' + (e.text || 'context boundary') + ' —');
      case 'result': {
        const ok = p.ok !== false;
        const cost = typeof p.cost === 'number' ? ' · ' + usd(p.cost) : '';
        const turns = p.turns ? ' · ' + p.turns + ' turns' : '';
        const head = (ok ? '✓ ' : '✗ ') + (p.step ? p.step + ' ' : 'agent ') + (ok ? 'finished' : 'stopped: ' + (p.error || 'failed'));
        return el('div', 'ev done' + (ok ? '' : ' failed'), head + turns + cost);
      }
      case 'usage': case 'init': return null;
      default: return el('div', 'ev meta', e.kind + (e.text ? ': ' + e.text : ''));
    }
  }

  function askItem(e, p) {
    if (p.kind === 'mail') return el('div', 'ev mail', '✉ you, to the inbox: ' + e.text);
    if (p.state === 'asked') {
      const d = el('div', 'ev question');
      d.append(el('span', 'who', 'question ' + p.id), document.createTextNode(p.question || e.text));
      return d;
    }
    let t = (p.id || '') + ' ' + (p.state || '');
    if (p.answer) t += ': ' + p.answer;
    else if (p.reason) t += ': ' + p.reason;
    return el('div', 'ev settled', t);
  }

  let lastSub = ''; // the subagent of the last event shown, to label a run of them once

  // Text streams into live elements as its deltas come; the whole text
  // event replaces them once the answer is stored. A cut answer (an
  // error, a retry, an interrupt) stays, marked as cut.
  let lives = [];

  function streamDelta(e, p) {
    const thinking = !!p.thinking;
    let cur = lives[lives.length - 1];
    if (!cur || cur.thinking !== thinking) {
      cur = { el: el('div', 'ev live ' + (thinking ? 'thinking' : 'text'), ''), thinking };
      lives.push(cur);
      stream.append(cur.el);
    }
    cur.el.textContent += e.text;
  }

  function endLives(cut) {
    for (const l of lives) {
      if (cut) { l.el.classList.remove('live'); l.el.classList.add('cut'); } else l.el.remove();
    }
    lives = [];
  }

  function show(e) {
    const p0 = e.payload || {};
    if (e.kind === 'delta') {
      if (!p0.subagent) streamDelta(e, p0);
      return;
    }
    if (!p0.subagent && lives.length) {
      if (e.kind === 'text' || e.kind === 'thinking' || e.kind === 'tool_call') endLives(false);
      else if (e.kind === 'error' || e.kind === 'retry' || e.kind === 'interrupt') endLives(true);
    }
    noteFacts(e);
    const d = item(e);
    if (!d) return;
    const sub = (e.payload || {}).subagent || '';
    if (sub) {
      d.classList.add('sub');
      if (sub !== lastSub) d.prepend(el('span', 'who', 'subagent · ' + sub));
    }
    lastSub = sub;
    stream.append(d);
  }

  // The page follows the stream to its newest event unless the person
  // scrolled up to read; scrolling back to the bottom follows again.
  let follow = true;
  let autoY = 0; // where the page last scrolled itself to

  // newestInView: the last event's bottom edge is on the screen.
  function newestInView() {
    const last = stream.lastElementChild;
    return !last || last.getBoundingClientRect().bottom <= window.innerHeight;
  }
  // A scroll event may come after more events were appended, so only a
  // position above the page's own last scroll means the person went up.
  window.addEventListener('scroll', () => {
    follow = newestInView() || window.scrollY >= autoY - 2;
  }, { passive: true });

  // toNewest scrolls just enough to show the newest event: a page whose
  // events all fit does not move (a click aimed at the side panel lands).
  function toNewest() {
    if (newestInView()) return;
    const last = stream.lastElementChild;
    autoY = window.scrollY + last.getBoundingClientRect().bottom - window.innerHeight + 24;
    window.scrollTo(0, autoY);
  }

  function receive(b) {
    if (b.gap && b.events.length && b.events[0].seq <= last) {
      // Numbered by a new server: start over with its events.
      stream.textContent = '';
      last = 0;
      lastSub = '';
    }
    if (b.gap && b.events.length) {
      stream.append(el('div', 'ev gap', 'Some earlier events are no longer kept; showing from here.'));
    }
    for (const e of b.events) {
      if (e.seq <= last) continue;
      last = e.seq;
      show(e);
      if (e.kind === 'ask' && (e.payload || {}).kind !== 'mail') refreshAsks();
    }
    $('events-empty').hidden = stream.childElementCount > 0;
    renderFacts();
    if (follow) toNewest();
  }

  // ---- the WebSocket, resumed from the last seq --------------------------

  let delay = 500;

  function setStatus(state, text) {
    $('status').dataset.state = state;
    $('status-text').textContent = text;
  }

  function connect() {
    const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(proto + '//' + location.host + '/ws?after=' + last, ['flower.v1', 'bearer.' + token]);
    ws.onopen = () => {
      delay = 500;
      setStatus('live', 'live');
      refreshAsks();
    };
    ws.onmessage = (m) => receive(JSON.parse(m.data));
    ws.onclose = () => {
      setStatus('reconnecting', 'disconnected · retrying');
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10000);
    };
  }

  // ---- questions waiting for the person ---------------------------------

  const askCards = new Map(); // id -> element, kept so typed text survives a refresh
  let askTimes = new Map(); // id -> the time the person has waited, at fetch
  let fetchedAt = Date.now();

  async function refreshAsks() {
    let list;
    try { list = await api('/asks'); } catch (_) { return; }
    fetchedAt = Date.now();
    askTimes = new Map(list.map((a) => [a.id, a.waited_s]));
    const ids = new Set(list.map((a) => a.id));
    for (const [id, card] of askCards) {
      if (!ids.has(id)) { card.remove(); askCards.delete(id); }
    }
    for (const a of list) {
      if (!askCards.has(a.id)) {
        const card = askCard(a);
        askCards.set(a.id, card);
        $('asks').append(card);
      }
    }
    renderAskChrome();
    tickWaited();
  }

  function renderAskChrome() {
    const n = askCards.size;
    $('asks-empty').hidden = n > 0;
    $('ask-count').hidden = n === 0;
    $('ask-count').textContent = String(n);
    document.querySelector('.card.asks').classList.toggle('idle', n === 0);
    document.title = n > 0 ? '(' + n + ') flower — waiting for you' : 'flower';
  }

  function askCard(a) {
    const card = el('div', 'ask');
    card.dataset.askId = a.id;
    card.append(el('p', 'q', a.question), el('div', 'waited'));
    if (a.options.length) {
      const opts = el('div', 'options');
      a.options.forEach((o, i) => {
        const b = el('button', 'option');
        b.type = 'button';
        b.dataset.option = o;
        b.append(el('span', 'n', String(i + 1)), document.createTextNode(o));
        b.addEventListener('click', () => settle(card, '/answer', { id: a.id, text: o }));
        opts.append(b);
      });
      card.append(opts);
    }
    const text = el('textarea', 'free');
    text.rows = 2;
    text.placeholder = a.options.length ? 'Or answer in your own words…' : 'Your answer…';
    const send = el('button', 'primary answer-send', 'Answer');
    send.type = 'button';
    send.addEventListener('click', () => {
      if (text.value.trim() === '') { text.focus(); return; }
      settle(card, '/answer', { id: a.id, text: text.value });
    });
    text.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' && (ev.metaKey || ev.ctrlKey)) send.click();
    });
    const decline = el('button', 'link', 'Decline');
    decline.type = 'button';
    decline.title = 'The agent decides by itself and notes its assumption';
    decline.addEventListener('click', () => settle(card, '/decline', { id: a.id, reason: text.value.trim() }));
    const row = el('div', 'row');
    row.append(send, decline, el('span', 'feedback'));
    card.append(text, row);
    return card;
  }

  async function settle(card, path, body) {
    const buttons = card.querySelectorAll('button');
    buttons.forEach((b) => { b.disabled = true; });
    const fb = card.querySelector('.feedback');
    try {
      const r = await api(path, body);
      fb.textContent = r.ok ? 'Sent.' : 'This question is no longer waiting (answered elsewhere or timed out).';
      fb.classList.toggle('bad', !r.ok);
    } catch (err) {
      fb.textContent = err.message;
      fb.classList.add('bad');
      buttons.forEach((b) => { b.disabled = false; });
      return;
    }
    refreshAsks(); // the ask left the pending list before the answer came back
  }

  function tickWaited() {
    const extra = (Date.now() - fetchedAt) / 1000;
    for (const [id, card] of askCards) {
      const s = Math.round((askTimes.get(id) || 0) + extra);
      const w = s < 60 ? s + ' s' : Math.floor(s / 60) + ' min';
      card.querySelector('.waited').textContent = id + ' · waiting for ' + w;
    }
  }
  setInterval(tickWaited, 1000);

  // ---- inbox, oracle, interrupt -----------------------------------------

  $('mail-send').addEventListener('click', async () => {
    const text = $('mail').value;
    if (text.trim() === '') { $('mail').focus(); return; }
    try {
      await api('/send', { text });
      $('mail').value = '';
      feedback('mail-feedback', 'Sent to the inbox.');
    } catch (err) { feedback('mail-feedback', err.message, true); }
  });

  async function askOracle() {
    const question = $('oracle-q').value.trim();
    if (question === '') { $('oracle-q').focus(); return; }
    $('oracle-ask').disabled = true;
    feedback('oracle-feedback', 'Thinking… the run goes on.');
    try {
      const r = await api('/oracle', { question });
      $('oracle-answer').textContent = r.answer;
      $('oracle-answer').hidden = false;
      feedback('oracle-feedback', '');
    } catch (err) { feedback('oracle-feedback', err.message, true); }
    $('oracle-ask').disabled = false;
  }
  $('oracle-ask').addEventListener('click', askOracle);
  $('oracle-q').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') askOracle(); });

  // Interrupting takes two clicks: the first says what will be lost.
  let armed = false;
  function arm(on) {
    armed = on;
    $('interrupt').classList.toggle('armed', on);
    $('interrupt').textContent = on ? 'Interrupt now — an answer streaming is lost (its tokens are paid)' : 'Interrupt…';
    $('interrupt-cancel').hidden = !on;
  }
  $('interrupt').addEventListener('click', async () => {
    if (!armed) { arm(true); feedback('interrupt-feedback', ''); return; }
    arm(false);
    try {
      await api('/interrupt', { text: $('interrupt-text').value });
      $('interrupt-text').value = '';
      feedback('interrupt-feedback', 'Stopping after the current tool.');
    } catch (err) { feedback('interrupt-feedback', err.message, true); }
  });
  $('interrupt-cancel').addEventListener('click', () => arm(false));

  // ---- the next wake, once the run has ended -----------------------------

  async function nextWake() {
    $('next-go').disabled = true;
    try {
      await api('/wake', { text: $('next-text').value });
      $('next-text').value = '';
      feedback('next-feedback', 'Starting…');
    } catch (err) { feedback('next-feedback', err.message, true); }
    $('next-go').disabled = false;
  }
  $('next-go').addEventListener('click', nextWake);
  $('next-text').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey) { ev.preventDefault(); nextWake(); }
  });

  renderFacts();
  renderAskChrome();
  if (token) connect();
  else setStatus('reconnecting', 'no token: open the address flower printed (it ends with ?token=…)');
})();
