// The review page of `swe-harvest review`: a list of tasks with filters, one task at
// a time, and a decision per task, all from the keyboard. Plain JavaScript, no
// framework, no build step; served by the binary. Text from tasks (issues, patches,
// test names) is only ever inserted as text nodes; the one HTML it inserts is the
// issue's Markdown, which the server rendered with raw HTML turned into text.
'use strict';

(() => {
  const ROW_HEIGHT = 30;
  const POLL_MS = 3000;
  const MAX_LISTED_TESTS = 400;
  const DIFFICULTY_ORDER = ['<15 min fix', '15 min - 1 hour', '1-4 hours', '>4 hours'];
  // The screen's verdicts, most urgent first (the list's default order).
  const VERDICT_ORDER = ['flag', 'uncertain', 'keep'];
  const STATE_LABELS = {
    keep: 'kept',
    reject: 'rejected',
    needs_work: 'needs work',
    stale: 'review again',
    unreviewed: 'not reviewed',
  };

  const state = {
    session: null,
    // The current task's evidence terms, longest first (see highlightEvidence).
    evidenceTerms: [],
    tasks: [],
    byId: new Map(),
    filtered: [],
    selected: 0,
    view: null,
    currentId: null,
    current: null,
    navigation: [],
    position: -1,
    cache: new Map(),
    revision: 0,
    myRevisions: new Set(),
    inflight: 0,
    saveEpoch: 0,
    readOnly: null,
    serverDown: false,
    pending: null,
    reasonIndex: 0,
    drafts: new Map(),
    unsentSeconds: new Map(),
    openedAt: null,
    diffLayout: localStorage.getItem('review-diff-layout') || 'unified',
    hintsOpen: false,
    navigationStart: null,
  };
  // Read by the benchmark (scripts/bench-review.sh) and the browser tests.
  const metrics = { listReadyMs: null, navigations: [], ready: false, taskShown: null };
  window.reviewMetrics = metrics;

  const $ = (id) => document.getElementById(id);

  /** An element; string children become text nodes, never markup. */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    if (props) {
      for (const [key, value] of Object.entries(props)) {
        if (value == null || value === false) continue;
        if (key === 'class') node.className = value;
        else if (key === 'text') node.textContent = value;
        else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
        else node.setAttribute(key, value === true ? '' : String(value));
      }
    }
    for (const child of children) {
      if (child != null && child !== false) node.append(child);
    }
    return node;
  }

  async function api(path, options) {
    const response = await fetch(path, options);
    let body = null;
    try {
      body = await response.json();
    } catch (_) {
      body = null;
    }
    if (!response.ok) throw new Error((body && body.error) || `${response.status} ${response.statusText}`);
    return body;
  }

  function afterPaint() {
    return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }

  // ------------------------------------------------------------------ summaries ---

  function stateOf(task) {
    if (task.decision) return task.decision.decision;
    if (task.earlier) return 'stale';
    return 'unreviewed';
  }

  function formatSeconds(seconds) {
    const total = Math.round(seconds || 0);
    if (total < 60) return `${total} s`;
    const minutes = Math.floor(total / 60);
    if (minutes < 60) return `${minutes} min ${total % 60} s`;
    return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }

  function formatTime(text) {
    return text ? text.replace('T', ' ').replace('Z', ' UTC') : '';
  }

  function reasonLabel(code) {
    const reason = (state.session ? state.session.reject_reasons : []).find((item) => item.code === code);
    return reason ? `${code}: ${reason.label}` : code;
  }

  function describeDecision(decision) {
    const parts = [`${STATE_LABELS[decision.decision]} by ${decision.reviewer}`];
    if (decision.reason) parts.push(`(${decision.reason})`);
    parts.push(`at ${formatTime(decision.decided_at)}`);
    return parts.join(' ');
  }

  // ---------------------------------------------------------------- top of page ---

  function renderProgress() {
    const counts = { keep: 0, reject: 0, needs_work: 0, stale: 0, unreviewed: 0 };
    const reviewers = new Map();
    for (const task of state.tasks) {
      counts[stateOf(task)] += 1;
      if (task.decision) {
        const entry = reviewers.get(task.decision.reviewer) || { count: 0, seconds: 0 };
        entry.count += 1;
        entry.seconds += task.decision.seconds_spent || 0;
        reviewers.set(task.decision.reviewer, entry);
      }
    }
    const reviewed = counts.keep + counts.reject + counts.needs_work;
    const who = [...reviewers.entries()]
      .sort((a, b) => b[1].count - a[1].count)
      .map(([name, entry]) => `${name} ${entry.count} (${formatSeconds(entry.seconds / entry.count)} a task)`)
      .join(', ');
    let text = `reviewed ${reviewed} of ${state.tasks.length}: kept ${counts.keep}, rejected ${counts.reject}, needs work ${counts.needs_work}`;
    if (counts.stale) text += `; ${counts.stale} to review again`;
    if (who) text += ` · by ${who}`;
    $('progress').textContent = text;
    $('progress').title = text;
    renderFunnel(reviewed, counts.keep);
  }

  function renderFunnel(reviewed, kept) {
    const funnel = $('funnel');
    funnel.replaceChildren();
    const stages = (state.session && state.session.funnel) || [];
    for (const stage of stages) {
      if (!stage.entered) continue;
      const reasons = Object.entries(stage.reasons || {})
        .sort((a, b) => b[1] - a[1])
        .map(([reason, count]) => `${reason} ${count}`)
        .join(', ');
      if (funnel.childElementCount) funnel.append(el('span', { class: 'arrow', text: '→' }));
      funnel.append(
        el(
          'span',
          { class: 'stage', title: reasons ? `dropped: ${reasons}` : 'nothing dropped' },
          `${stage.stage} `,
          el('b', { text: String(stage.passed) }),
          ` of ${stage.entered}`,
        ),
      );
    }
    if (funnel.childElementCount) funnel.append(el('span', { class: 'arrow', text: '→' }));
    funnel.append(
      el('span', { class: 'stage' }, `${state.session ? state.session.source : ''}: `, el('b', { text: String(state.tasks.length) }), ' tasks'),
      el('span', { class: 'arrow', text: '→' }),
      el('span', { class: 'stage' }, 'review ', el('b', { text: String(kept) }), ` kept of ${reviewed} reviewed`),
    );
  }

  function showBanner() {
    const banner = $('banner');
    if (state.serverDown) {
      banner.textContent = 'The review server does not answer (was it stopped?): decisions cannot be saved. Start it again with `swe-harvest review`; nothing saved is lost.';
      banner.className = 'error';
      banner.hidden = false;
    } else if (state.readOnly) {
      banner.textContent = `${state.readOnly}. Decisions cannot be saved until it ends; the page becomes writable again by itself.`;
      banner.className = '';
      banner.hidden = false;
    } else {
      banner.hidden = true;
    }
    const disabled = Boolean(state.readOnly || state.serverDown);
    for (const id of ['decide-keep', 'decide-reject', 'decide-needs-work']) $(id).disabled = disabled;
    $('note').readOnly = disabled;
  }

  let toastTimer = null;
  function toast(text, kind) {
    const node = $('toast');
    node.textContent = text;
    node.className = kind || '';
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => {
      node.hidden = true;
    }, kind === 'error' || kind === 'warn' ? 8000 : 2500);
  }

  // ----------------------------------------------------------------------- list ---

  const FILTERS = ['text', 'repo', 'language', 'month', 'difficulty', 'flag', 'state', 'score-min', 'score-max', 'sort'];

  function filterValue(name) {
    return name === 'sort' ? $('sort').value : $(`filter-${name}`).value;
  }

  function fillSelect(id, label, values, current) {
    const select = $(id);
    select.replaceChildren(el('option', { value: '', text: label }));
    for (const [value, text] of values) select.append(el('option', { value, text }));
    select.value = current || '';
  }

  function buildFilters() {
    const distinct = (pick) => [...new Set(state.tasks.map(pick).filter((value) => value))].sort();
    const saved = JSON.parse(sessionStorage.getItem('review-filters') || '{}');
    const counted = (pick) => {
      const counts = new Map();
      for (const task of state.tasks) counts.set(pick(task), (counts.get(pick(task)) || 0) + 1);
      return (value) => `${value} (${counts.get(value) || 0})`;
    };
    const repoCount = counted((task) => task.repo);
    fillSelect('filter-repo', 'all repositories', distinct((task) => task.repo).map((repo) => [repo, repoCount(repo)]), saved.repo);
    fillSelect('filter-language', 'all languages', distinct((task) => task.language).map((value) => [value, value]), saved.language);
    fillSelect('filter-month', 'all months', distinct((task) => task.month).reverse().map((value) => [value, value]), saved.month);
    const difficulties = distinct((task) => task.difficulty).sort((a, b) => DIFFICULTY_ORDER.indexOf(a) - DIFFICULTY_ORDER.indexOf(b));
    fillSelect('filter-difficulty', 'any difficulty', difficulties.map((value) => [value, value]), saved.difficulty);
    const flags = [...new Set(state.tasks.flatMap((task) => task.flags))].sort();
    fillSelect('filter-flag', 'any flag', [['(none)', 'no flag'], ...flags.map((flag) => [flag, flag])], saved.flag);
    fillSelect(
      'filter-state',
      'any review state',
      [
        ['todo', 'to review'],
        ['unreviewed', 'not reviewed'],
        ['stale', 'to review again'],
        ['decided', 'decided'],
        ['keep', 'kept'],
        ['reject', 'rejected'],
        ['needs_work', 'needs work'],
      ],
      saved.state,
    );
    const sort = $('sort');
    sort.replaceChildren();
    for (const [value, text] of [
      ['verdict', 'sort: verdict (flag, uncertain, keep)'],
      ['id', 'sort: instance id'],
      ['newest', 'sort: newest first'],
      ['oldest', 'sort: oldest first'],
      ['score-desc', 'sort: score, highest first'],
      ['score-asc', 'sort: score, lowest first'],
      ['mutation-asc', 'sort: mutation score, weakest tests first'],
      ['mutation-desc', 'sort: mutation score, strongest tests first'],
      ['difficulty', 'sort: difficulty'],
      ['repo', 'sort: repository'],
      ['state', 'sort: review state'],
    ]) {
      sort.append(el('option', { value, text }));
    }
    sort.value = saved.sort || 'verdict';
    $('filter-text').value = saved.text || '';
    $('filter-score-min').value = saved['score-min'] || '';
    $('filter-score-max').value = saved['score-max'] || '';
  }

  function saveFilters() {
    const saved = {};
    for (const name of FILTERS) saved[name] = filterValue(name);
    sessionStorage.setItem('review-filters', JSON.stringify(saved));
  }

  function applyFilters(keepSelection) {
    const text = $('filter-text').value.trim().toLowerCase();
    const repo = $('filter-repo').value;
    const language = $('filter-language').value;
    const month = $('filter-month').value;
    const difficulty = $('filter-difficulty').value;
    const flag = $('filter-flag').value;
    const wanted = $('filter-state').value;
    const min = parseFloat($('filter-score-min').value);
    const max = parseFloat($('filter-score-max').value);
    const selectedId = keepSelection && state.filtered[state.selected] ? state.filtered[state.selected].id : null;
    const matches = (task) => {
      if (text && !task.id.toLowerCase().includes(text) && !task.repo.toLowerCase().includes(text)) return false;
      if (repo && task.repo !== repo) return false;
      if (language && task.language !== language) return false;
      if (month && task.month !== month) return false;
      if (difficulty && task.difficulty !== difficulty) return false;
      if (flag === '(none)' && task.flags.length) return false;
      if (flag && flag !== '(none)' && !task.flags.includes(flag)) return false;
      if (!Number.isNaN(min) && !(task.score != null && task.score >= min)) return false;
      if (!Number.isNaN(max) && !(task.score != null && task.score <= max)) return false;
      if (wanted) {
        const current = stateOf(task);
        if (wanted === 'todo' && current !== 'unreviewed' && current !== 'stale') return false;
        if (wanted === 'decided' && !task.decision) return false;
        if (!['todo', 'decided'].includes(wanted) && current !== wanted) return false;
      }
      return true;
    };
    const filtered = state.tasks.filter(matches);
    const sort = $('sort').value;
    const byId = (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const score = (task) => (task.score == null ? -1 : task.score);
    // Tasks never probed (or with no viable mutant) sort after the scored ones, either way.
    const mutation = (task, missing) => (task.mutation_score == null ? missing : task.mutation_score);
    const rank = (task) => {
      const index = DIFFICULTY_ORDER.indexOf(task.difficulty);
      return index < 0 ? DIFFICULTY_ORDER.length : index;
    };
    // The screen's verdict, most urgent first: flag, uncertain, keep, then unscreened.
    const verdictRank = (task) => {
      const index = VERDICT_ORDER.indexOf(task.verdict);
      return index < 0 ? VERDICT_ORDER.length : index;
    };
    const comparators = {
      verdict: (a, b) => verdictRank(a) - verdictRank(b) || byId(a, b),
      id: byId,
      newest: (a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : byId(a, b)),
      oldest: (a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : byId(a, b)),
      'score-desc': (a, b) => score(b) - score(a) || byId(a, b),
      'score-asc': (a, b) => score(a) - score(b) || byId(a, b),
      'mutation-asc': (a, b) => mutation(a, 2) - mutation(b, 2) || byId(a, b),
      'mutation-desc': (a, b) => mutation(b, -1) - mutation(a, -1) || byId(a, b),
      difficulty: (a, b) => rank(a) - rank(b) || byId(a, b),
      repo: (a, b) => (a.repo < b.repo ? -1 : a.repo > b.repo ? 1 : byId(a, b)),
      state: (a, b) => (stateOf(a) < stateOf(b) ? -1 : stateOf(a) > stateOf(b) ? 1 : byId(a, b)),
    };
    const compare = comparators[sort] || comparators.verdict;
    filtered.sort(compare);
    state.filtered = filtered;
    const found = selectedId ? filtered.findIndex((task) => task.id === selectedId) : -1;
    state.selected = found >= 0 ? found : Math.min(state.selected, Math.max(filtered.length - 1, 0));
    saveFilters();
    renderCounts();
    renderRows();
  }

  function renderCounts() {
    const shown = state.filtered.length;
    const counts = { keep: 0, reject: 0, needs_work: 0, stale: 0, unreviewed: 0 };
    for (const task of state.filtered) counts[stateOf(task)] += 1;
    $('counts').replaceChildren(
      el('b', { text: String(shown) }),
      ` of ${state.tasks.length} tasks shown · `,
      `${counts.unreviewed} not reviewed, ${counts.stale} to review again, ${counts.keep} kept, ${counts.reject} rejected, ${counts.needs_work} need work`,
      el('span', { class: 'hint' }, '   j/k move · Enter opens · / search · f filters · u to review · ? keys'),
    );
  }

  function renderRows() {
    const scroll = $('list-scroll');
    $('list-spacer').style.height = `${state.filtered.length * ROW_HEIGHT}px`;
    const first = Math.max(0, Math.floor(scroll.scrollTop / ROW_HEIGHT) - 5);
    const count = Math.ceil((scroll.clientHeight || 600) / ROW_HEIGHT) + 10;
    const rows = $('list-rows');
    rows.style.top = `${first * ROW_HEIGHT}px`;
    const nodes = [];
    for (let index = first; index < Math.min(state.filtered.length, first + count); index += 1) {
      nodes.push(rowNode(state.filtered[index], index));
    }
    rows.replaceChildren(...nodes);
  }

  function rowNode(task, index) {
    const current = stateOf(task);
    let stateText = STATE_LABELS[current];
    if (task.decision && task.decision.reason) stateText += `: ${task.decision.reason}`;
    return el(
      'div',
      {
        class: `list-row${index === state.selected ? ' selected' : ''}`,
        'data-id': task.id,
        'data-index': index,
        onclick: () => openFromList(index),
      },
      el('span', { class: 'c-id', text: task.id, title: task.id }),
      el('span', { class: 'c-repo', text: task.repo }),
      el('span', { class: 'c-lang', text: task.language }),
      el('span', { class: 'c-month', text: task.month }),
      el('span', { class: 'c-diff', text: task.difficulty || '–' }),
      el('span', { class: `c-score verdict-${task.verdict || 'none'}`, title: task.verdict ? `verdict ${task.verdict}` : 'not screened' }, task.verdict ? el('b', { class: 'verdict', text: task.verdict }) : '', ` ${task.score == null ? '–' : task.score.toFixed(2)}`),
      el('span', { class: 'c-flags', title: task.flags.join(', ') }, ...task.flags.map((flag) => el('span', { class: 'flag', text: flag }))),
      el('span', { class: 'c-mutation', text: task.mutation_score == null ? '–' : task.mutation_score.toFixed(2) }),
      el('span', { class: 'c-tests', text: `${task.fail_to_pass} / ${task.pass_to_pass}` }),
      el('span', { class: `c-state state state-${current}`, text: stateText, title: task.decision && task.decision.note ? task.decision.note : stateText }),
    );
  }

  function select(index) {
    if (!state.filtered.length) return;
    state.selected = Math.max(0, Math.min(state.filtered.length - 1, index));
    const scroll = $('list-scroll');
    const top = state.selected * ROW_HEIGHT;
    if (top < scroll.scrollTop) scroll.scrollTop = top;
    else if (top + ROW_HEIGHT > scroll.scrollTop + scroll.clientHeight) scroll.scrollTop = top + ROW_HEIGHT - scroll.clientHeight;
    renderRows();
  }

  function openFromList(index) {
    if (!state.filtered[index]) return;
    state.selected = index;
    state.navigation = state.filtered.map((task) => task.id);
    go(state.filtered[index].id);
  }

  function showList() {
    pauseTimer();
    rememberDraft();
    state.view = 'list';
    state.currentId = null;
    $('task-view').hidden = true;
    $('list-view').hidden = false;
    applyFilters(true);
    select(state.selected);
    $('list-scroll').focus({ preventScroll: true });
  }

  // ----------------------------------------------------------------------- task ---

  function go(id, started) {
    history.pushState(null, '', `#/task/${encodeURIComponent(id)}`);
    openTask(id, started);
  }

  function fetchDetail(id) {
    if (!state.cache.has(id)) {
      const request = api(`/api/tasks/${encodeURIComponent(id)}`).catch((error) => {
        state.cache.delete(id);
        throw error;
      });
      state.cache.set(id, request);
      if (state.cache.size > 40) state.cache.delete(state.cache.keys().next().value);
    }
    return state.cache.get(id);
  }

  async function openTask(id, started) {
    if (state.view === 'task' && state.currentId && state.currentId !== id) {
      pauseTimer();
      rememberDraft();
    }
    state.view = 'task';
    state.currentId = id;
    state.pending = null;
    closeReasonPicker();
    $('list-view').hidden = true;
    $('task-view').hidden = false;
    if (!state.navigation.includes(id)) {
      state.navigation = state.filtered.some((task) => task.id === id)
        ? state.filtered.map((task) => task.id)
        : state.tasks.map((task) => task.id);
    }
    state.position = state.navigation.indexOf(id);
    const listed = state.filtered.findIndex((task) => task.id === id);
    if (listed >= 0) state.selected = listed;
    let detail;
    try {
      detail = await fetchDetail(id);
    } catch (error) {
      if (state.currentId === id) {
        $('task-title').textContent = id;
        toast(`cannot open ${id}: ${error.message}`, 'error');
      }
      return;
    }
    if (state.currentId !== id) return;
    renderTask(detail);
    resumeTimer();
    for (const offset of [1, -1, 2]) {
      const neighbour = state.navigation[state.position + offset];
      if (neighbour) fetchDetail(neighbour).catch(() => {});
    }
    if (started != null) {
      await afterPaint();
      metrics.navigations.push(performance.now() - started);
    }
    metrics.taskShown = id;
  }

  function navigate(offset) {
    const started = performance.now();
    const target = state.navigation[state.position + offset];
    if (!target) {
      toast(offset > 0 ? 'this is the last task of the list' : 'this is the first task of the list');
      return;
    }
    go(target, started);
  }

  function renderTask(detail) {
    state.current = detail;
    const summary = state.byId.get(detail.id);
    $('task-title').textContent = detail.id;
    const pullNumber = detail.id.slice(detail.id.lastIndexOf('-') + 1);
    const meta = $('task-meta');
    meta.replaceChildren(
      `${detail.repo} · created ${detail.created_at.slice(0, 10)} · version ${detail.version} · ${detail.language} · `,
      el('a', { href: `https://github.com/${detail.repo}/pull/${pullNumber}`, target: '_blank', rel: 'noopener noreferrer', text: `pull request #${pullNumber}` }),
    );
    $('task-position').textContent = state.position >= 0 ? `${state.position + 1} of ${state.navigation.length}` : '';
    $('changed-elsewhere').hidden = true;

    const issue = $('issue');
    issue.innerHTML = detail.issue_html;
    const hints = $('hints');
    $('hints-body').innerHTML = detail.hints_html || '';
    hints.querySelector('summary').firstChild.textContent = detail.hints_html ? 'Hints: comments before the fix ' : 'Hints: none ';
    hints.open = state.hintsOpen && Boolean(detail.hints_html);
    for (const link of document.querySelectorAll('.markdown a')) {
      link.target = '_blank';
      link.rel = 'noopener noreferrer';
    }

    renderQuality(detail);
    renderDiffs(detail);
    renderSurvivors(detail);
    state.evidenceTerms = [];
    renderTests(detail);
    renderRuns(detail);
    renderEnvironment(detail);
    renderFacts(detail, summary);
    renderDecision(detail);
    highlightEvidence(detail);
    $('task-main').scrollTop = 0;
  }

  function renderQuality(detail) {
    const card = $('flags-card');
    const quality = detail.quality;
    if (!quality) {
      card.hidden = true;
      return;
    }
    card.hidden = false;
    const facts = [];
    if (quality.score != null) facts.push(`score ${quality.score.toFixed(2)}`);
    if (quality.verdict) facts.push(`verdict ${quality.verdict}`);
    if (quality.difficulty) facts.push(`difficulty ${quality.difficulty}${quality.difficulty_note ? ` (${quality.difficulty_note})` : ''}`);
    const items = quality.flags.map((flag) =>
      el(
        'div',
        { class: 'flag-item' },
        el('span', { class: 'flag', text: flag.code }),
        ` ${flag.reason}`,
        flag.precision ? el('span', { class: 'flag-precision', text: ` · ${flag.precision}` }) : '',
        ...flag.evidence.map((term) => el('span', { class: 'evidence-term', text: term })),
      ),
    );
    $('flags').replaceChildren(
      el('div', { class: 'score-line', text: facts.join(' · ') || 'no score' }),
      ...(items.length ? items : [el('div', { class: 'muted', text: 'no flag raised' })]),
    );
  }

  // ---------------------------------------------------------------------- diffs ---

  function parseDiff(text) {
    const files = [];
    let file = null;
    let hunk = null;
    let oldNumber = 0;
    let newNumber = 0;
    const lines = text.split('\n');
    if (lines.length && lines[lines.length - 1] === '') lines.pop();
    for (const line of lines) {
      if (line.startsWith('diff --git ')) {
        const at = line.lastIndexOf(' b/');
        file = { path: at >= 0 ? line.slice(at + 3) : line.slice(11), meta: [], hunks: [], added: 0, deleted: 0 };
        files.push(file);
        hunk = null;
        continue;
      }
      if (!file) {
        file = { path: '(patch)', meta: [], hunks: [], added: 0, deleted: 0 };
        files.push(file);
      }
      const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)$/.exec(line);
      if (header) {
        hunk = { header: line, lines: [] };
        file.hunks.push(hunk);
        oldNumber = Number(header[1]);
        newNumber = Number(header[2]);
        continue;
      }
      if (!hunk) {
        if (line.startsWith('+++ ') && !line.endsWith('/dev/null')) file.path = line.slice(4).replace(/^b\//, '');
        else if (!line.startsWith('--- ') && !line.startsWith('+++ ')) file.meta.push(line);
        continue;
      }
      const sign = line[0];
      if (sign === '+') {
        hunk.lines.push({ type: 'add', text: line.slice(1), newNumber: newNumber++ });
        file.added += 1;
      } else if (sign === '-') {
        hunk.lines.push({ type: 'del', text: line.slice(1), oldNumber: oldNumber++ });
        file.deleted += 1;
      } else if (sign === '\\') {
        hunk.lines.push({ type: 'note', text: line });
      } else {
        hunk.lines.push({ type: 'ctx', text: line.slice(1), oldNumber: oldNumber++, newNumber: newNumber++ });
      }
    }
    return files;
  }

  const KEYWORDS = {
    python: 'and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self',
    js: 'async await break case catch class const continue default delete do else export extends false finally for function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while yield interface type enum implements readonly',
    go: 'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false',
    rust: 'as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err',
    java: 'abstract boolean break byte case catch char class continue default do double else enum extends final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch this throw throws true false try void while var',
    c: 'auto break case char const continue default do double else enum extern float for goto if inline int long return short signed sizeof static struct switch typedef union unsigned void volatile while NULL true false bool class namespace template typename public private protected virtual new delete nullptr',
    hash: '',
  };
  const LANGUAGE_OF_EXTENSION = {
    py: 'python', pyi: 'python', js: 'js', jsx: 'js', mjs: 'js', cjs: 'js', ts: 'js', tsx: 'js',
    go: 'go', rs: 'rust', java: 'java', kt: 'java', scala: 'java', c: 'c', h: 'c', cc: 'c', cpp: 'c', cxx: 'c', hpp: 'c',
    sh: 'hash', bash: 'hash', toml: 'hash', yaml: 'hash', yml: 'hash', cfg: 'hash', ini: 'hash', txt: null, md: null,
  };
  const tokenizers = new Map();

  function tokenizer(path) {
    const extension = path.includes('.') ? path.slice(path.lastIndexOf('.') + 1).toLowerCase() : '';
    const language = LANGUAGE_OF_EXTENSION[extension];
    if (!language) return null;
    if (!tokenizers.has(language)) {
      const hashComments = language === 'python' || language === 'hash';
      const comment = hashComments ? '#.*$' : '\\/\\/.*$|\\/\\*.*?(?:\\*\\/|$)';
      const quotes = language === 'rust' ? ['"'] : language === 'js' || language === 'go' ? ['"', "'", '`'] : ['"', "'"];
      const strings = quotes.map((quote) => `${quote}(?:[^${quote}\\\\]|\\\\.)*(?:${quote}|$)`).join('|');
      const words = KEYWORDS[language].split(' ').filter(Boolean);
      const keyword = words.length ? `|(\\b(?:${words.join('|')})\\b)` : '';
      tokenizers.set(language, new RegExp(`(${comment})|(${strings})|(\\b\\d[\\w.]*\\b)${keyword}`, 'g'));
    }
    return tokenizers.get(language);
  }

  /** A line of code with its tokens coloured; text nodes only. */
  function codeNode(text, pattern) {
    const cell = document.createDocumentFragment();
    if (!pattern || text.length > 2000) {
      cell.append(text);
      return cell;
    }
    pattern.lastIndex = 0;
    let last = 0;
    let match;
    while ((match = pattern.exec(text)) !== null) {
      if (match[0] === '') {
        pattern.lastIndex += 1;
        continue;
      }
      if (match.index > last) cell.append(text.slice(last, match.index));
      const kind = match[1] ? 'tok-com' : match[2] ? 'tok-str' : match[3] ? 'tok-num' : 'tok-kw';
      cell.append(el('span', { class: kind, text: match[0] }));
      last = match.index + match[0].length;
    }
    if (last < text.length) cell.append(text.slice(last));
    return cell;
  }

  function renderDiffs(detail) {
    const patch = parseDiff(detail.patch);
    const tests = parseDiff(detail.test_patch);
    renderDiff($('patch'), patch);
    renderDiff($('test-patch'), tests);
    const stats = (files) => {
      const added = files.reduce((sum, file) => sum + file.added, 0);
      const deleted = files.reduce((sum, file) => sum + file.deleted, 0);
      return `${files.length} file${files.length === 1 ? '' : 's'}, +${added} −${deleted} · ${state.diffLayout === 'split' ? 'side by side' : 'unified'}`;
    };
    $('patch-stats').textContent = stats(patch);
    $('test-patch-stats').textContent = stats(tests);
  }

  // Probe's surviving mutants, under the gold patch: each is a patch a model could
  // submit that passes every FAIL_TO_PASS and PASS_TO_PASS test.
  function renderSurvivors(detail) {
    const card = $('probe-card');
    const probe = detail.probe;
    if (!probe || !probe.surviving_mutants.length) {
      card.hidden = true;
      return;
    }
    card.hidden = false;
    const count = probe.surviving_mutants.length;
    $('probe-stats').textContent =
      `${count} survivor${count === 1 ? '' : 's'}` + (probe.mutation_score == null ? '' : ` · mutation score ${probe.mutation_score.toFixed(2)}`);
    const items = probe.surviving_mutants.map((mutant) => {
      const diff = el('div', { class: 'diff survivor-diff' });
      renderDiff(diff, parseDiff(mutant.patch));
      const place = `${mutant.file}:${mutant.line}${mutant.function ? `, in ${mutant.function}` : ''}`;
      return el(
        'div',
        { class: 'survivor' },
        el('div', { class: 'survivor-head' }, el('span', { class: 'flag', text: mutant.operator }), ` this patch passes every test: ${mutant.change} (${place})`),
        diff,
      );
    });
    $('survivors').replaceChildren(...items);
  }

  function renderDiff(container, files) {
    const split = state.diffLayout === 'split';
    const nodes = files.map((file) => {
      const pattern = tokenizer(file.path);
      const table = el('table', { class: 'diff-table' });
      const body = el('tbody');
      table.append(body);
      for (const meta of file.meta) {
        if (meta.startsWith('index ')) continue;
        body.append(el('tr', null, el('td', { class: 'diff-meta', colspan: 4, text: meta })));
      }
      for (const hunk of file.hunks) {
        body.append(el('tr', { class: 'hunk' }, el('td', { colspan: 4, text: hunk.header })));
        if (split) splitRows(body, hunk.lines, pattern);
        else unifiedRows(body, hunk.lines, pattern);
      }
      // A fixed table takes its column widths from here, not from its first row.
      table.prepend(
        split
          ? el('colgroup', null, el('col', { class: 'col-num' }), el('col'), el('col', { class: 'col-num' }), el('col'))
          : el('colgroup', null, el('col', { class: 'col-num' }), el('col', { class: 'col-num' }), el('col', { class: 'col-sign' }), el('col')),
      );
      return el(
        'details',
        { class: 'diff-file', open: true },
        el('summary', null, `${file.path} `, el('span', { class: 'stat-add', text: `+${file.added}` }), ' ', el('span', { class: 'stat-del', text: `−${file.deleted}` })),
        table,
      );
    });
    container.replaceChildren(...(nodes.length ? nodes : [el('div', { class: 'muted', text: 'empty' })]));
  }

  function unifiedRows(body, lines, pattern) {
    for (const line of lines) {
      if (line.type === 'note') {
        body.append(el('tr', null, el('td', { class: 'diff-meta', colspan: 4, text: line.text })));
        continue;
      }
      const kind = line.type === 'add' ? 'add' : line.type === 'del' ? 'del' : '';
      body.append(
        el(
          'tr',
          null,
          el('td', { class: `num ${kind ? `${kind}-num` : ''}`, text: line.oldNumber == null ? '' : String(line.oldNumber) }),
          el('td', { class: `num ${kind ? `${kind}-num` : ''}`, text: line.newNumber == null ? '' : String(line.newNumber) }),
          el('td', { class: `sign ${kind}`, text: kind === 'add' ? '+' : kind === 'del' ? '−' : '' }),
          el('td', { class: kind }, codeNode(line.text, pattern)),
        ),
      );
    }
  }

  function splitRows(body, lines, pattern) {
    let index = 0;
    const cells = (line, side) => {
      if (!line) return [el('td', { class: 'num empty' }), el('td', { class: 'empty' })];
      const kind = line.type === 'add' ? 'add' : line.type === 'del' ? 'del' : '';
      const number = side === 'old' ? line.oldNumber : line.newNumber;
      return [el('td', { class: `num ${kind ? `${kind}-num` : ''}`, text: String(number) }), el('td', { class: kind }, codeNode(line.text, pattern))];
    };
    while (index < lines.length) {
      const line = lines[index];
      if (line.type === 'note') {
        body.append(el('tr', null, el('td', { class: 'diff-meta', colspan: 4, text: line.text })));
        index += 1;
      } else if (line.type === 'ctx') {
        body.append(el('tr', null, ...cells(line, 'old'), ...cells(line, 'new')));
        index += 1;
      } else {
        const deleted = [];
        const added = [];
        while (index < lines.length && lines[index].type === 'del') deleted.push(lines[index++]);
        while (index < lines.length && lines[index].type === 'add') added.push(lines[index++]);
        for (let row = 0; row < Math.max(deleted.length, added.length); row += 1) {
          body.append(el('tr', null, ...cells(deleted[row], 'old'), ...cells(added[row], 'new')));
        }
      }
    }
  }

  // ---------------------------------------------------------------------- tests ---

  function renderTestList(details, label, tests, emptyText) {
    details.querySelector('summary').textContent = `${label} (${tests.length})`;
    const list = details.querySelector('ul');
    const search = details.querySelector('input');
    const fill = () => {
      const query = search ? search.value.trim().toLowerCase() : '';
      const matching = query ? tests.filter((test) => test.toLowerCase().includes(query)) : tests;
      const shown = matching.slice(0, MAX_LISTED_TESTS).map((test) => el('li', { text: test }));
      if (matching.length > MAX_LISTED_TESTS) {
        shown.push(el('li', { class: 'more', text: `and ${matching.length - MAX_LISTED_TESTS} more: narrow the filter` }));
      }
      if (!matching.length) shown.push(el('li', { class: 'more', text: query ? 'no test matches' : emptyText }));
      list.replaceChildren(...shown);
      // A list filled later (opened, filtered) gets the task's evidence marked too.
      if (state.evidenceTerms.length) markTerms(list, state.evidenceTerms);
    };
    if (search) {
      search.value = '';
      search.oninput = fill;
    }
    // Long lists are filled when they are first opened: moving between tasks stays fast.
    if (details.open) {
      details.ontoggle = null;
      fill();
    } else {
      list.replaceChildren();
      details.ontoggle = () => {
        if (details.open && !list.childElementCount) fill();
      };
    }
  }

  function renderTests(detail) {
    renderTestList($('f2p'), 'FAIL_TO_PASS', detail.fail_to_pass, 'none');
    renderTestList($('p2p'), 'PASS_TO_PASS', detail.pass_to_pass, 'none');
    renderTestList($('flaky'), 'flaky in validation, never labelled', detail.flaky_tests, 'none');
  }

  const GLYPHS = { PASSED: '✓', FAILED: '✗', ERROR: 'E', SKIPPED: 's', XFAIL: 'x', XPASS: 'X' };

  function renderRuns(detail) {
    const container = $('runs');
    const runs = [...detail.runs].sort((a, b) => (a.phase === b.phase ? a.attempt - b.attempt : a.phase === 'pre' ? -1 : 1));
    if (!runs.length) {
      container.replaceChildren(el('div', { class: 'muted', text: `${detail.validation_runs || 'no'} validation runs recorded for this task, but the store of this data dir holds none of them.` }));
      return;
    }
    const failToPass = new Set(detail.fail_to_pass);
    const flaky = new Set(detail.flaky_tests);
    const names = new Set();
    for (const run of runs) for (const name of Object.keys(run.tests)) names.add(name);
    const steadyPass = (name) => runs.every((run) => run.tests[name] === 'PASSED');
    const rank = (name) => (failToPass.has(name) ? 0 : flaky.has(name) ? 1 : 2);
    const interesting = [...names].filter((name) => failToPass.has(name) || flaky.has(name) || !steadyPass(name)).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1));
    const steady = [...names].filter((name) => !interesting.includes(name)).sort();
    const head = el('tr', null, el('th', { class: 'test', text: `test (${names.size})` }));
    const sub = el('tr', null, el('th', { class: 'test', text: 'exit code · seconds · log' }));
    const totals = el('tr', null, el('th', { class: 'test', text: 'passed / failed' }));
    for (const run of runs) {
      head.append(el('th', { text: `${run.phase === 'pre' ? 'before' : 'after'} #${run.attempt}`, title: run.phase === 'pre' ? 'base commit + test patch' : 'base commit + test patch + gold patch' }));
      const exit = run.timed_out ? 'timeout' : run.exit_code == null ? '–' : String(run.exit_code);
      sub.append(
        el('th', null, `${exit} · ${run.duration_secs.toFixed(1)} `, run.log ? el('a', { href: run.log, target: '_blank', rel: 'noopener', text: 'log' }) : ''),
      );
      const statuses = Object.values(run.tests);
      const passed = statuses.filter((status) => status === 'PASSED').length;
      const failed = statuses.filter((status) => status === 'FAILED' || status === 'ERROR').length;
      totals.append(el('th', { text: `${passed} / ${failed}` }));
    }
    const row = (name) => {
      const badges = [];
      if (failToPass.has(name)) badges.push(el('span', { class: 'badge badge-f2p', text: 'F2P' }));
      if (flaky.has(name)) badges.push(el('span', { class: 'badge badge-flaky', text: 'flaky' }));
      return el(
        'tr',
        null,
        el('td', { class: 'test', title: name }, name, ...badges),
        ...runs.map((run) => {
          const status = run.tests[name];
          return el('td', { class: status || 'absent', title: status || 'not in this run', text: status ? GLYPHS[status] || status : '·' });
        }),
      );
    };
    const table = el('table', { class: 'runs-table' }, el('thead', null, head, sub, totals), el('tbody', null, ...interesting.map(row)));
    const parts = [table];
    if (steady.length) {
      const more = el('details', { class: 'runs-note' }, el('summary', { text: `${steady.length} more tests passed in every run` }));
      more.ontoggle = () => {
        if (more.open && more.childElementCount === 1) {
          more.append(el('table', { class: 'runs-table' }, el('tbody', null, ...steady.slice(0, 2000).map(row))));
        }
      };
      parts.push(more);
    }
    container.replaceChildren(...parts);
  }

  // ------------------------------------------------------------------ side panel ---

  function definitions(container, entries) {
    const nodes = [];
    for (const [term, value, mono] of entries) {
      nodes.push(el('dt', { text: term }), el('dd', { class: mono ? 'mono' : '', text: value == null || value === '' ? '–' : String(value) }));
    }
    container.replaceChildren(...nodes);
  }

  function renderEnvironment(detail) {
    const environment = detail.environment;
    definitions($('environment'), [
      ['runtime', environment.runtime ? `${environment.ecosystem || ''} ${environment.runtime}`.trim() : null],
      ['rung', environment.rung],
      ['image', environment.image, true],
      ['test command', environment.test_command, true],
      ['spec from', environment.spec_source],
    ]);
  }

  function renderFacts(detail) {
    definitions($('facts'), [
      ['repository', detail.repo],
      ['created', formatTime(detail.created_at)],
      ['version', detail.version],
      ['base commit', detail.base_commit.slice(0, 12), true],
      ['env commit', detail.environment_setup_commit.slice(0, 12), true],
      ['validation runs', detail.validation_runs],
      ['content hash', detail.hash.slice(0, 12), true],
    ]);
  }

  function renderDecision(detail) {
    const current = detail.decision;
    const box = $('decision-current');
    if (current) {
      box.replaceChildren(
        el('span', { class: `state state-${current.decision}`, text: STATE_LABELS[current.decision] }),
        current.reason ? `${reasonLabel(current.reason)} · ` : '',
        `${current.reviewer}, ${formatTime(current.decided_at)}`,
      );
    } else {
      const earlier = detail.history[0];
      box.replaceChildren(
        earlier
          ? el('span', { class: 'state state-stale', text: `to review again: the task changed since it was ${STATE_LABELS[earlier.decision]} by ${earlier.reviewer}` })
          : el('span', { class: 'state state-unreviewed', text: 'not reviewed yet' }),
      );
    }
    for (const [id, decision] of [
      ['decide-keep', 'keep'],
      ['decide-reject', 'reject'],
      ['decide-needs-work', 'needs_work'],
    ]) {
      $(id).classList.toggle('chosen', Boolean(current && current.decision === decision));
    }
    const draft = state.drafts.get(detail.id);
    $('note').value = draft != null ? draft : current ? current.note : '';
    renderPending();
    renderTimeSpent();
    const history = $('history');
    history.replaceChildren(
      ...(detail.history.length
        ? detail.history.map((decision) =>
            el(
              'li',
              { class: decision.content_hash === detail.hash ? '' : 'earlier' },
              describeDecision(decision),
              decision.content_hash === detail.hash ? '' : ' (on earlier content)',
              decision.note ? el('div', { class: 'muted', text: `“${decision.note}”` }) : '',
            ),
          )
        : [el('li', { class: 'muted', text: 'no decision yet' })]),
    );
    showBanner();
  }

  function renderPending() {
    const pending = state.pending;
    let text = '';
    if (pending && pending.decision === 'reject') {
      text = pending.reason ? `reject: ${pending.reason}. Write a note, Enter saves.` : 'reject: pick a reason (1-9, 0, arrows, Enter)';
    } else if (pending && pending.decision === 'needs_work') {
      text = 'needs work: say what in the note, Enter saves';
    }
    $('decision-pending').textContent = text;
  }

  function renderTimeSpent() {
    const detail = state.current;
    if (!detail) return;
    const stored = detail.decision ? detail.decision.seconds_spent : 0;
    const now = currentSeconds(detail.id);
    $('time-spent').textContent = `time on this task: ${formatSeconds(stored + now)}${stored ? ` (${formatSeconds(stored)} recorded)` : ''}`;
  }

  // ------------------------------------------------------------------ evidence ---

  function highlightEvidence(detail) {
    const terms = [];
    for (const flag of (detail.quality && detail.quality.flags) || []) {
      for (const term of flag.evidence) if (term && term.length >= 2) terms.push({ term, code: flag.code });
    }
    terms.sort((a, b) => b.term.length - a.term.length);
    state.evidenceTerms = terms;
    if (!terms.length) return;
    // The issue, the diffs, and the test lists (FAIL_TO_PASS, flaky tests) that some
    // flags' evidence is in.
    const lists = ['f2p', 'flaky'].map((id) => document.querySelector(`#${id} ul.tests`));
    for (const root of [$('issue'), $('hints-body'), $('patch'), $('test-patch'), ...lists]) if (root) markTerms(root, terms);
  }

  function markTerms(root, terms) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    for (const node of nodes) {
      const text = node.nodeValue;
      let cursor = 0;
      const parts = [];
      while (cursor < text.length) {
        let best = null;
        for (const entry of terms) {
          const at = text.indexOf(entry.term, cursor);
          if (at >= 0 && (!best || at < best.at)) best = { at, entry };
        }
        if (!best) break;
        if (best.at > cursor) parts.push(text.slice(cursor, best.at));
        parts.push(el('mark', { class: 'evidence', title: best.entry.code, text: best.entry.term }));
        cursor = best.at + best.entry.term.length;
      }
      if (!parts.length) continue;
      if (cursor < text.length) parts.push(text.slice(cursor));
      node.replaceWith(...parts);
    }
  }

  // ----------------------------------------------------------------- decisions ---

  function currentSeconds(id) {
    let seconds = state.unsentSeconds.get(id) || 0;
    if (state.currentId === id && state.openedAt != null) seconds += (performance.now() - state.openedAt) / 1000;
    return seconds;
  }

  function pauseTimer() {
    if (state.currentId && state.openedAt != null) {
      state.unsentSeconds.set(state.currentId, currentSeconds(state.currentId));
      state.openedAt = null;
    }
  }

  function resumeTimer() {
    if (state.view === 'task' && document.visibilityState === 'visible') state.openedAt = performance.now();
  }

  function rememberDraft() {
    if (!state.current || state.current.id !== state.currentId) return;
    const saved = state.current.decision ? state.current.decision.note : '';
    const value = $('note').value;
    if (value !== saved) state.drafts.set(state.current.id, value);
    else state.drafts.delete(state.current.id);
  }

  function startDecision(decision) {
    if (state.readOnly || state.serverDown) {
      toast(state.readOnly || 'the review server does not answer', 'error');
      return;
    }
    if (decision === 'keep') {
      save('keep', null);
      return;
    }
    state.pending = { decision, reason: null };
    if (decision === 'reject') openReasonPicker();
    else $('note').focus();
    renderPending();
  }

  function openReasonPicker() {
    const picker = $('reason-picker');
    const reasons = state.session.reject_reasons;
    state.reasonIndex = 0;
    picker.replaceChildren(
      ...reasons.map((reason, index) =>
        el(
          'div',
          { class: 'reason', role: 'option', 'data-code': reason.code, onclick: () => chooseReason(index) },
          el('kbd', { text: index < 9 ? String(index + 1) : index === 9 ? '0' : ' ' }),
          el('span', { text: `${reason.code}: ${reason.label}` }),
        ),
      ),
    );
    picker.hidden = false;
    markReason();
  }

  function closeReasonPicker() {
    $('reason-picker').hidden = true;
  }

  function markReason() {
    const items = $('reason-picker').children;
    for (let index = 0; index < items.length; index += 1) items[index].classList.toggle('active', index === state.reasonIndex);
    if (items[state.reasonIndex]) items[state.reasonIndex].scrollIntoView({ block: 'nearest' });
  }

  function chooseReason(index) {
    const reason = state.session.reject_reasons[index];
    if (!reason || !state.pending) return;
    state.pending.reason = reason.code;
    closeReasonPicker();
    renderPending();
    $('note').focus();
  }

  function reasonKey(event) {
    const count = state.session.reject_reasons.length;
    if (/^[0-9]$/.test(event.key)) {
      const index = event.key === '0' ? 9 : Number(event.key) - 1;
      if (index < count) chooseReason(index);
    } else if (event.key === 'ArrowDown' || event.key === 'j') {
      state.reasonIndex = (state.reasonIndex + 1) % count;
      markReason();
    } else if (event.key === 'ArrowUp' || event.key === 'k') {
      state.reasonIndex = (state.reasonIndex - 1 + count) % count;
      markReason();
    } else if (event.key === 'Enter') {
      chooseReason(state.reasonIndex);
    } else if (event.key === 'Escape') {
      state.pending = null;
      closeReasonPicker();
      renderPending();
    } else {
      return;
    }
    event.preventDefault();
  }

  function commitNote() {
    const detail = state.current;
    if (!detail) return;
    if (state.pending && state.pending.decision === 'reject' && !state.pending.reason) {
      openReasonPicker();
      return;
    }
    if (state.pending) save(state.pending.decision, state.pending.reason);
    else if (detail.decision) save(detail.decision.decision, detail.decision.reason);
    else toast('choose keep (y), reject (x) or needs work (w) first');
  }

  async function save(decision, reason) {
    const detail = state.current;
    if (!detail) return;
    const id = detail.id;
    const note = $('note').value;
    pauseTimer();
    const seconds = currentSeconds(id);
    state.unsentSeconds.set(id, 0);
    resumeTimer();
    state.inflight += 1;
    state.saveEpoch += 1;
    let answer;
    try {
      answer = await api(`/api/tasks/${encodeURIComponent(id)}/decision`, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ decision, reason, note, seconds_spent: seconds, seen_revision: detail.decision ? detail.decision.revision : null }),
      });
    } catch (error) {
      state.unsentSeconds.set(id, (state.unsentSeconds.get(id) || 0) + seconds);
      toast(`not saved: ${error.message}`, 'error');
      if (/read-only/.test(error.message)) {
        state.readOnly = error.message;
        showBanner();
      }
      return;
    } finally {
      state.inflight -= 1;
      state.saveEpoch += 1;
    }
    state.myRevisions.add(answer.decision.revision);
    state.revision = Math.max(state.revision, answer.decision.revision);
    state.pending = null;
    state.drafts.delete(id);
    applyDecision(answer.decision);
    $('note').blur();
    const label = `${STATE_LABELS[decision]}${reason ? ` (${reason})` : ''}`;
    if (answer.changed_elsewhere) {
      const other = answer.changed_elsewhere;
      showChangedElsewhere(`This task had been decided elsewhere (${describeDecision(other)}); your decision, ${label}, replaced it.`);
      toast(`saved ${id}: ${label}, replacing a decision made elsewhere`, 'warn');
      return;
    }
    toast(`saved ${id}: ${label}`);
    if (state.currentId === id && state.navigation[state.position + 1]) navigate(1);
  }

  /** A decision written here or elsewhere: into the list and the open task. */
  function applyDecision(decision) {
    const summary = state.byId.get(decision.instance_id);
    if (summary) {
      if (decision.content_hash === summary.hash) {
        summary.decision = decision;
        summary.earlier = null;
      } else if (!summary.decision && (!summary.earlier || summary.earlier.revision < decision.revision)) {
        summary.earlier = decision;
      }
    }
    const cached = state.cache.get(decision.instance_id);
    if (cached) {
      cached.then((detail) => {
        detail.history = [decision, ...detail.history.filter((item) => item.content_hash !== decision.content_hash)];
        if (decision.content_hash === detail.hash) detail.decision = decision;
        if (state.current === detail && state.currentId === detail.id) renderDecision(detail);
      }).catch(() => {});
    }
    renderProgress();
    if (state.view === 'list') {
      renderCounts();
      renderRows();
    }
  }

  function showChangedElsewhere(text) {
    const box = $('changed-elsewhere');
    box.textContent = text;
    box.hidden = false;
  }

  async function poll() {
    const epoch = state.saveEpoch;
    let changes;
    try {
      changes = await api(`/api/changes?since=${state.revision}`);
    } catch (_) {
      if (!state.serverDown) {
        state.serverDown = true;
        showBanner();
      }
      return;
    }
    if (state.serverDown) {
      state.serverDown = false;
    }
    state.readOnly = changes.read_only;
    showBanner();
    // A save in flight (or done since this poll left) brings its own answer.
    if (state.inflight || epoch !== state.saveEpoch) return;
    for (const decision of changes.decisions) {
      if (state.myRevisions.has(decision.revision)) continue;
      applyDecision(decision);
      if (decision.instance_id === state.currentId && state.view === 'task') {
        showChangedElsewhere(`Changed elsewhere: ${describeDecision(decision)}${decision.note ? `, note “${decision.note}”` : ''}.`);
      }
    }
    state.revision = Math.max(state.revision, changes.revision);
  }

  // ----------------------------------------------------------------------- keys ---

  function isField(node) {
    return node && (node.tagName === 'INPUT' || node.tagName === 'TEXTAREA' || node.tagName === 'SELECT');
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const help = $('help');
    if (!help.hidden) {
      if (event.key === 'Escape' || event.key === '?') {
        help.hidden = true;
        event.preventDefault();
      }
      return;
    }
    if (!$('reason-picker').hidden && state.view === 'task') {
      reasonKey(event);
      return;
    }
    const target = event.target;
    if (isField(target)) {
      if (event.key === 'Escape') {
        target.blur();
        if (state.view === 'list') $('list-scroll').focus({ preventScroll: true });
        event.preventDefault();
      } else if (target.id === 'note' && event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        commitNote();
      } else if (target.id === 'filter-text' && (event.key === 'Enter' || event.key === 'ArrowDown')) {
        event.preventDefault();
        target.blur();
        $('list-scroll').focus({ preventScroll: true });
      }
      return;
    }
    if (event.key === '?') {
      help.hidden = false;
      event.preventDefault();
      return;
    }
    const handled = state.view === 'list' ? listKey(event.key) : taskKey(event.key);
    if (handled) event.preventDefault();
  }

  function listKey(key) {
    const page = Math.max(1, Math.floor($('list-scroll').clientHeight / ROW_HEIGHT) - 1);
    switch (key) {
      case 'j':
      case 'ArrowDown':
        select(state.selected + 1);
        return true;
      case 'k':
      case 'ArrowUp':
        select(state.selected - 1);
        return true;
      case 'PageDown':
        select(state.selected + page);
        return true;
      case 'PageUp':
        select(state.selected - page);
        return true;
      case 'Home':
        select(0);
        return true;
      case 'End':
        select(state.filtered.length - 1);
        return true;
      case 'Enter':
      case 'o':
        openFromList(state.selected);
        return true;
      case '/':
        $('filter-text').focus();
        $('filter-text').select();
        return true;
      case 'f':
        $('filter-repo').focus();
        return true;
      case 'u':
        $('filter-state').value = $('filter-state').value === 'todo' ? '' : 'todo';
        applyFilters(false);
        return true;
      default:
        return false;
    }
  }

  function taskKey(key) {
    switch (key) {
      case 'j':
      case 'ArrowRight':
        navigate(1);
        return true;
      case 'k':
      case 'ArrowLeft':
        navigate(-1);
        return true;
      case 'Escape':
        if (state.pending) {
          state.pending = null;
          renderPending();
        } else {
          history.pushState(null, '', '#/');
          showList();
        }
        return true;
      case 'y':
        startDecision('keep');
        return true;
      case 'x':
        startDecision('reject');
        return true;
      case 'w':
        startDecision('needs_work');
        return true;
      case 'n':
        $('note').focus();
        return true;
      case 'd':
        state.diffLayout = state.diffLayout === 'split' ? 'unified' : 'split';
        localStorage.setItem('review-diff-layout', state.diffLayout);
        if (state.current) {
          renderDiffs(state.current);
          renderSurvivors(state.current);
          highlightEvidence(state.current);
        }
        return true;
      case 'h':
        state.hintsOpen = !$('hints').open;
        $('hints').open = state.hintsOpen;
        return true;
      case 't':
        $('f2p').open = true;
        $('f2p').querySelector('input').focus();
        return true;
      case 'p':
        $('p2p').open = !$('p2p').open;
        return true;
      default:
        return false;
    }
  }

  // ---------------------------------------------------------------------- start ---

  function route() {
    const match = /^#\/task\/(.+)$/.exec(location.hash);
    if (match) openTask(decodeURIComponent(match[1]));
    else showList();
  }

  function bindControls() {
    document.addEventListener('keydown', onKey);
    for (const name of FILTERS) {
      const node = name === 'sort' ? $('sort') : $(`filter-${name}`);
      node.addEventListener(node.tagName === 'SELECT' ? 'change' : 'input', () => applyFilters(false));
    }
    $('filters').addEventListener('submit', (event) => event.preventDefault());
    $('filter-reset').addEventListener('click', () => {
      for (const name of FILTERS) {
        const node = name === 'sort' ? $('sort') : $(`filter-${name}`);
        node.value = name === 'sort' ? 'id' : '';
      }
      applyFilters(false);
    });
    $('list-scroll').addEventListener('scroll', () => requestAnimationFrame(renderRows), { passive: true });
    window.addEventListener('resize', () => state.view === 'list' && renderRows());
    $('back').addEventListener('click', () => {
      history.pushState(null, '', '#/');
      showList();
    });
    $('previous').addEventListener('click', () => navigate(-1));
    $('next').addEventListener('click', () => navigate(1));
    $('decide-keep').addEventListener('click', () => startDecision('keep'));
    $('decide-reject').addEventListener('click', () => startDecision('reject'));
    $('decide-needs-work').addEventListener('click', () => startDecision('needs_work'));
    $('help-button').addEventListener('click', () => {
      $('help').hidden = !$('help').hidden;
    });
    $('hints').addEventListener('toggle', () => {
      state.hintsOpen = $('hints').open;
    });
    window.addEventListener('hashchange', route);
    document.addEventListener('visibilitychange', () => (document.visibilityState === 'visible' ? resumeTimer() : pauseTimer()));
    setInterval(renderTimeSpent, 1000);
  }

  async function start() {
    bindControls();
    try {
      const [session, tasks] = await Promise.all([api('/api/session'), api('/api/tasks')]);
      state.session = session;
      state.tasks = tasks;
      state.byId = new Map(tasks.map((task) => [task.id, task]));
      state.revision = session.revision;
      state.readOnly = session.read_only;
    } catch (error) {
      const banner = $('banner');
      banner.textContent = `The review page could not load its tasks: ${error.message}`;
      banner.className = 'error';
      banner.hidden = false;
      return;
    }
    $('source').textContent = state.session.source;
    $('reviewer').textContent = `reviewer: ${state.session.reviewer}`;
    buildFilters();
    applyFilters(false);
    renderProgress();
    showBanner();
    route();
    await afterPaint();
    metrics.listReadyMs = performance.now();
    metrics.ready = true;
    setInterval(poll, POLL_MS);
  }

  document.addEventListener('DOMContentLoaded', start);
})();
