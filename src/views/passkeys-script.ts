/**
 * The browser half of the WebAuthn ceremonies on /login and /account, served as /static/passkeys.js (CSP
 * script-src 'self': no inline script). It only runs navigator.credentials through @simplewebauthn/browser
 * (served as /static/simplewebauthn-browser.js) and then submits the page's own CSRF-protected form, so the server
 * side of every page stays a plain form post. What it says on failure is the page's text, in the page's language.
 *
 *   [data-passkey-login=FORM]     password-less sign-in: options from POST /api/auth/passkeys/login/options
 *   [data-passkey-mfa=FORM]       second step: options from POST /api/auth/login/mfa/passkey-options (FORM's mfa_token)
 *   [data-passkey-register=FORM]  add a passkey: options from POST /api/auth/passkeys/register/options (with FORM's
 *                                 password, when the page asks for it: the re-authentication of CONTRACT §11)
 */
export const PASSKEYS_SCRIPT = `'use strict';
(function () {
  var lib = window.SimpleWebAuthnBrowser;
  if (!lib || !lib.browserSupportsWebAuthn()) return;

  function postJson(url, body) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body || {}),
    }).then(function (res) {
      return res.json().then(function (json) {
        if (!res.ok) {
          var failure = new Error('request failed');
          failure.code = json && json.error;
          throw failure;
        }
        return json;
      });
    });
  }

  // The sentences are the page's, in its language (data- attributes of the error element, views/kit.tsx PasskeyError);
  // the API's own message is English (CONTRACT §2), so only its code is used.
  function showError(form, kind) {
    var el = form.querySelector('[data-passkey-error]');
    if (!el) return;
    el.textContent = el.getAttribute('data-' + kind) || el.getAttribute('data-failed') || '';
    el.hidden = false;
  }

  function kindOf(err) {
    if (err && err.name === 'NotAllowedError') return 'cancelled';
    var code = err && err.code;
    if (code === 'reauthentication_failed' || code === 'invalid_credentials') return 'wrong-password';
    if (code === 'reauthentication_required') return 'reauth';
    if (code === 'rate_limited' || code === 'too_many_attempts') return 'too-many';
    return 'failed';
  }

  function wire(attribute, field, getOptions, ceremony) {
    document.querySelectorAll('[' + attribute + ']').forEach(function (button) {
      var form = document.getElementById(button.getAttribute(attribute));
      if (!form) return;
      button.hidden = false;
      button.addEventListener('click', function () {
        button.disabled = true;
        getOptions(form)
          .then(function (optionsJSON) { return ceremony({ optionsJSON: optionsJSON }); })
          .then(function (credential) {
            form.elements[field].value = JSON.stringify(credential);
            form.submit();
          })
          .catch(function (err) {
            button.disabled = false;
            showError(form, kindOf(err));
          });
      });
    });
  }

  wire('data-passkey-login', 'response', function () {
    return postJson('/api/auth/passkeys/login/options');
  }, lib.startAuthentication);

  wire('data-passkey-mfa', 'passkey', function (form) {
    return postJson('/api/auth/login/mfa/passkey-options', { mfa_token: form.elements.mfa_token.value });
  }, lib.startAuthentication);

  wire('data-passkey-register', 'response', function (form) {
    var password = form.elements.password;
    return postJson('/api/auth/passkeys/register/options', password && password.value ? { password: password.value } : {});
  }, lib.startRegistration);
})();
`;
