// The form of the FeedLayout reference client: posts a feed to the service (POST /v1/layouts) and opens the
// viewer on the layout it answers with. The service answers at once; the viewer shows pages as they are made.
'use strict';

const form = document.getElementById('form');
const errorLine = document.getElementById('error');

form.addEventListener('submit', async event => {
  event.preventDefault();
  errorLine.textContent = '';
  const field = name => form.elements[name].value.trim();
  const request = { options: {} };
  if (field('feedText')) {
    request.feedText = form.elements.feedText.value;
    if (field('baseURL')) request.baseURL = field('baseURL');
  } else if (field('feed')) {
    request.feed = field('feed');
  } else {
    errorLine.textContent = 'Give a feed URL or paste a feed.';
    return;
  }
  if (field('breakpoints')) {
    request.options.breakpoints = field('breakpoints');
  } else {
    request.options.width = Number(field('width'));
    request.options.columns = Number(field('columns'));
  }
  try {
    const response = await fetch('/v1/layouts', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request),
    });
    const body = await response.json();
    if (!response.ok) throw new Error(body.detail ?? `HTTP ${response.status}`);
    location.href = `/view/${body.id}`;
  } catch (error) {
    errorLine.textContent = `The service refused the feed: ${error.message}`;
  }
});
