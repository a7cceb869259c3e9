import { createHash } from 'node:crypto';

/**
 * The console's one script, served same-origin at CONSOLE_SCRIPT_PATH (the
 * pages' Content-Security-Policy allows `script-src 'self'` and nothing
 * inline): it only enhances. On the grants form it checks "Sees" as it is
 * typed, 300 ms after the last keystroke, by posting the form (its CSRF token
 * included) to the grant check route, and writes what a save would refuse,
 * and the patterns that match nothing, into the live region next to the
 * field (`aria-live="polite"`, named by the field's `aria-describedby`).
 * Without it the form posts and the save refuses exactly the same. Plain
 * ES2017, no framework, no build step: the text below is what the browser
 * runs; values reach the page as text nodes, never as markup.
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var region = document.querySelector('[data-grant-check]');
  var field = region && document.getElementById(region.getAttribute('data-for'));
  if (!field || !field.form) return;
  var form = field.form;
  var url = region.getAttribute('data-grant-check');
  var timer;
  var asked = 0;

  function show(className, lines) {
    var list = document.createElement('ul');
    list.className = 'plain ' + className;
    lines.forEach(function (text) {
      var item = document.createElement('li');
      item.textContent = text;
      list.appendChild(item);
    });
    region.replaceChildren(list);
  }

  function say(className, text) {
    var line = document.createElement('p');
    line.className = className;
    line.textContent = text;
    region.replaceChildren(line);
  }

  function where(finding) {
    if (finding.line !== undefined) return 'Line ' + finding.line + ': ';
    return finding.where ? finding.where + ': ' : '';
  }

  function answer(result) {
    var problems = result.problems || [];
    var warnings = result.warnings || [];
    if (problems.length > 0) {
      field.setAttribute('aria-invalid', 'true');
      show('error', problems.map(function (finding) { return where(finding) + finding.message; }));
      return;
    }
    field.removeAttribute('aria-invalid');
    if (warnings.length > 0) {
      show('warn', warnings.map(function (finding) { return where(finding) + finding.message + ' (saving is allowed)'; }));
      return;
    }
    say('ok', 'The patterns look valid.');
  }

  function check() {
    var mine = ++asked;
    fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { accept: 'application/json' },
      body: new URLSearchParams(new FormData(form)),
    })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) throw new Error(body.detail || String(response.status));
          return body;
        });
      })
      .then(function (body) {
        if (mine === asked) answer(body);
      })
      .catch(function () {
        if (mine === asked) say('hint', 'The patterns could not be checked just now; saving still checks them.');
      });
  }

  field.addEventListener('input', function () {
    clearTimeout(timer);
    timer = setTimeout(check, 300);
  });
})();
`;

/** Where the gateway serves it; `?v=` names this text, so a browser may keep it for good. */
export const CONSOLE_SCRIPT_PATH = '/admin/console.js';

/** The script's version: the first 16 hex digits of its SHA-256. */
export const CONSOLE_SCRIPT_VERSION = createHash('sha256').update(CONSOLE_SCRIPT).digest('hex').slice(0, 16);

/** The URL pages load it from. */
export const CONSOLE_SCRIPT_URL = `${CONSOLE_SCRIPT_PATH}?v=${CONSOLE_SCRIPT_VERSION}`;
