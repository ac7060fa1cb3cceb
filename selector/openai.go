package selector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// openAIClient is the go-openai adapter of ChatClient.
type openAIClient struct {
	client *openai.Client
	doer   *guardedDoer
	apiKey string
	// unusable is set when no request can succeed: no base URL (which
	// means api.openai.com) and no API key. Select returns it before any
	// network call.
	unusable error
}

// NewOpenAIClient returns a ChatClient that speaks the OpenAI chat
// completions wire format through github.com/sashabaranov/go-openai, to
// cfg.BaseURL (or api.openai.com) with cfg.APIKey. It works with OpenAI, GLM,
// Ollama, vLLM and other compatible servers.
//
// It handles go-openai's traps: the configured temperature reaches the wire
// even when it is 0 (go-openai would drop it); an error keeps the server's own
// message whatever the body's shape (OpenAI, Ollama's {"error":"..."}, vLLM,
// HTML); response bodies larger than cfg.MaxResponseBytes are refused without
// being read whole; and the API key is removed from every error message.
//
// httpClient may be nil. A client without a Timeout (the default
// http.Client has none) is copied and given one of cfg.Timeout plus 5
// seconds, a backstop behind the per-attempt context deadline.
func NewOpenAIClient(config *Config, httpClient *http.Client) (ChatClient, error) {
	cfg := defaultConfig()
	if config != nil {
		cfg = config.withDefaults()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var hc http.Client
	if httpClient != nil {
		hc = *httpClient
	}
	if hc.Timeout == 0 {
		hc.Timeout = cfg.Timeout + 5*time.Second
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	// Azure's classic deployment URL is served in Azure's way whatever
	// provider is named (the provider decides the request's fields; the URL
	// can only be Azure's, and sent as written it could only answer 404).
	az, ok, err := azureClassic(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if ok {
		oc = openai.DefaultAzureConfig(cfg.APIKey, az.resource)
		oc.APIVersion = az.apiVersion
		oc.AzureModelMapperFunc = func(string) string { return az.deployment }
	}
	doer := &guardedDoer{client: &hc, limit: cfg.MaxResponseBytes}
	oc.HTTPClient = doer
	return &openAIClient{client: openai.NewClientWithConfig(oc), doer: doer, apiKey: cfg.APIKey, unusable: cfg.keyless()}, nil
}

// keyless is the error for a configuration whose requests go to
// api.openai.com (no base URL, or that one) without an API key, which the
// server can only refuse; nil otherwise. The defaults are such a
// configuration: they construct (bindings read them from ConfigSchema),
// and the first selection fails with this, before any request.
func (c Config) keyless() error {
	if strings.TrimSpace(c.APIKey) != "" || c.OwnClient {
		return nil
	}
	if base := strings.TrimSpace(c.BaseURL); base != "" {
		u, err := url.Parse(base)
		if err != nil || !strings.EqualFold(u.Hostname(), "api.openai.com") {
			return nil
		}
	}
	return &ConfigError{Var: envOf("api_key"), Field: "APIKey", Problem: "unset while the base URL (" + envOf("base_url") + " or OPENAI_BASE_URL) is unset or api.openai.com, where no request without a key can succeed",
		Want: "the base URL of your model server (and its API key if it needs one) or an OpenAI API key; in tests, the URL of a fake model: modeltest.New in Go, toolselect.testing.FakeModel in Python"}
}

// unserved says, for a model this configuration sends to api.openai.com
// (the endpoint an empty base URL means) that api.openai.com does not serve,
// what is wrong and the two settings that fix it; "" when nothing is known
// to be wrong. The default model (GLM) with no base URL is such a pair: the
// selector warns when it is made ([Config.Logger]) and adds these words to
// each attempt the server refuses. It is a warning, not an error: the
// defaults must construct (bindings read them from ConfigSchema), and a
// caller's own client (OwnClient) sends its requests where it likes.
func (c Config) unserved(model string) string {
	if c.OwnClient || !strings.HasPrefix(strings.ToLower(strings.TrimSpace(model)), "glm-") {
		return ""
	}
	if base := strings.TrimSpace(c.BaseURL); base != "" {
		u, err := url.Parse(base)
		if err != nil || !strings.EqualFold(u.Hostname(), "api.openai.com") {
			return ""
		}
	}
	where := "unset, which means api.openai.com"
	if strings.TrimSpace(c.BaseURL) != "" {
		where = fmt.Sprintf("%q", c.BaseURL)
	}
	return fmt.Sprintf("the model %q is a Zhipu GLM model, which api.openai.com does not serve, and the base URL (%s or %s) is %s: set the base URL of a server that serves it (https://api.z.ai/api/paas/v4, https://open.bigmodel.cn/api/paas/v4, or your own), or set the model (%s / %s) to one the server has",
		model, envOf("base_url"), "OPENAI_BASE_URL", where, envOf("model"), envOf("fallback_model"))
}

// azureDeployment is Azure OpenAI's classic deployment URL taken apart:
// https://RES.openai.azure.com/openai/deployments/NAME?api-version=V.
type azureDeployment struct {
	resource   string // the URL up to /openai/deployments
	deployment string
	apiVersion string
}

// azureClassic reads a base URL of Azure OpenAI's classic form, which the
// go-openai client serves in Azure's way (its Azure configuration): the
// deployment in the path, api-version in the query, the key in the api-key
// header. Every request goes to the URL's deployment, whatever the model
// (the request's model names the dialect only). ok is false for any other
// URL (the v1 form, .../openai/v1, is taken as it is); a classic URL
// without api-version is a configuration error that shows the v1 form.
// Sources: learn.microsoft.com/azure/ai-foundry/openai/reference (classic),
// .../api-version-lifecycle (v1), go-openai's config.go (DefaultAzureConfig).
func azureClassic(baseURL string) (azureDeployment, bool, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || baseURL == "" {
		return azureDeployment{}, false, nil
	}
	const marker = "/openai/deployments/"
	i := strings.Index(strings.ToLower(u.Path), marker)
	if i < 0 {
		return azureDeployment{}, false, nil
	}
	name, _, _ := strings.Cut(strings.Trim(u.Path[i+len(marker):], "/"), "/")
	version := u.Query().Get("api-version")
	v1 := u.Scheme + "://" + u.Host + u.Path[:i] + "/openai/v1"
	switch {
	case name == "":
		return azureDeployment{}, false, configErr("BaseURL", baseURL,
			fmt.Sprintf("an Azure OpenAI deployment URL must name the deployment (/openai/deployments/NAME?api-version=...); or use the v1 form %s with the deployment's name as the model", v1))
	case version == "":
		return azureDeployment{}, false, configErr("BaseURL", baseURL,
			fmt.Sprintf("an Azure OpenAI deployment URL needs its api-version (?api-version=2024-10-21); or use the v1 form %s with model %q", v1, name))
	}
	return azureDeployment{resource: u.Scheme + "://" + u.Host + u.Path[:i], deployment: name, apiVersion: version}, true, nil
}

// failedKey holds a *failedReply in a request's context: the guarded doer
// records there what go-openai's errors do not carry of a failed response:
// its Retry-After header and its whole body (go-openai keeps only the
// fields of OpenAI's error object, and no body at all when it decodes one).
type failedKey struct{}

type failedReply struct {
	retryAfter time.Duration
	hasRetry   bool
	body       []byte
}

// maxRetryAfter caps what a server may ask for.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110, 10.2.3). A date in the past means no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		return time.Duration(min(n, int64(maxRetryAfter/time.Second))) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter).Round(time.Second), true
}

// Chat sends one chat completion. Failures are *ChatError values.
//
// go-openai builds and sends the request and reads error statuses; the
// dialect's fields are set on the body as it leaves (bodyOverlay), and a 2xx
// body is read by the selector's one reply reader (readCompletion), so a
// provider's reply shape (content parts, object arguments, an error in a 200,
// a stream) is read the same way for every driver.
func (c *openAIClient) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, req.Timeout)
		defer cancel()
	}
	creq := openai.ChatCompletionRequest{
		Model:    req.Model,
		Messages: make([]openai.ChatCompletionMessage, len(req.Messages)),
	}
	for i, m := range req.Messages {
		cm := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ReasoningContent: m.ReasoningContent, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			cm.ToolCalls = append(cm.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		creq.Messages[i] = cm
	}
	// go-openai checks a request before sending it (OpenAI's reasoning
	// models, completions-only models): it is shown the temperature and the
	// reasoning_effort that go out, so that it checks the request as sent.
	// (The overlay below still writes the exact values.) The token-limit
	// field is not shown: a refused field name is what adapt-once swaps.
	if !req.OmitTemperature {
		creq.Temperature = float32(req.Temperature)
	}
	if raw, ok := req.Params["reasoning_effort"]; ok {
		_ = json.Unmarshal(raw, &creq.ReasoningEffort)
	}
	if req.ResponseFormat == "json_object" {
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	for i, raw := range req.Tools {
		var t struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
				Strict      bool            `json:"strict"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return ChatResponse{}, &ChatError{Kind: KindTransport, Message: fmt.Sprintf("tools[%d] is not an OpenAI tool: %v", i, err)}
		}
		creq.Tools = append(creq.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters, Strict: t.Function.Strict,
		}})
	}
	start := time.Now()
	ra := &failedReply{}
	ov := &bodyOverlay{set: map[string]json.RawMessage{}}
	if !req.OmitTemperature {
		ov.set["temperature"] = json.RawMessage(strconv.FormatFloat(req.Temperature, 'f', -1, 64))
	}
	for k, v := range req.Params {
		ov.set[k] = v
	}
	for k, v := range req.ExtraBody {
		ov.set[k] = v
	}
	rctx := context.WithValue(context.WithValue(ctx, overlayKey{}, ov), failedKey{}, ra)
	_, err := c.client.CreateChatCompletion(rctx, creq)
	if err != nil {
		return ChatResponse{}, c.chatError(ctx, err, req.Model, time.Since(start), ra)
	}
	if ov.body == nil {
		return ChatResponse{}, &ChatError{Kind: KindTransport, Message: "the response body was not read"}
	}
	out, err := readCompletion(ov.body)
	if err != nil {
		var ce *ChatError
		if errors.As(err, &ce) {
			ce.Message = clipMiddle(redact(ce.Message, c.apiKey), maxErrorMessage)
		}
		return out, err
	}
	return out, nil
}

// goOpenAIChecks are go-openai's own refusals of a request before it is sent
// (github.com/sashabaranov/go-openai v1.43.0: chat.go's model check,
// reasoning_validator.go), each with the setting that causes it. Its other
// pre-send errors cannot happen here: the selector never streams
// (ErrChatCompletionStreamNotSupported), never sets MultiContent
// (ErrContentFieldsMisused) nor tool Parameters.
var goOpenAIChecks = []struct {
	err     error
	setting string
}{
	{openai.ErrChatCompletionInvalidModel, envOf("model") + " or " + envOf("fallback_model") + " (a completions-only model such as davinci, babbage or ada cannot answer chat completions: name a chat model)"},
	{openai.ErrReasoningModelLimitationsOther, envOf("temperature") + " (OpenAI reasoning models take only their default temperature: leave " + envOf("provider") + " auto or openai, which omits it)"},
	{openai.ErrO1BetaLimitationsOther, envOf("temperature") + " (OpenAI reasoning models take only their default temperature)"},
	{openai.ErrReasoningModelMaxTokensDeprecated, envOf("max_tokens") + " (this model takes max_completion_tokens)"},
	{openai.ErrReasoningSamplingUnsupported, envOf("temperature") + " (omitted when reasoning is on)"},
	{openai.ErrReasoningEffortUnsupported, envOf("reasoning")},
	{openai.ErrReasoningToolsRequireResponses, envOf("mode") + " or " + envOf("reasoning") + " (native tool calls with reasoning need OpenAI's Responses API: use mode json, or reasoning off)"},
	{openai.ErrReasoningModelLimitationsLogprobs, "logprobs"},
	{openai.ErrO1BetaLimitationsTools, envOf("mode")},
	{openai.ErrO1BetaLimitationsMessageTypes, envOf("model") + " (this model takes no system message)"},
}

// chatError classifies a go-openai error, keeping the server's message and
// never the API key. *openai.RequestError is checked before *openai.APIError:
// an Ollama-style {"error":"..."} body arrives as a RequestError wrapping an
// empty APIError.
func (c *openAIClient) chatError(ctx context.Context, err error, model string, elapsed time.Duration, ra *failedReply) error {
	mk := func(kind FailureKind, status int, msg string, cause error) error {
		return &ChatError{Kind: kind, StatusCode: status, Message: clipMiddle(redact(msg, c.apiKey), maxErrorMessage), Err: cause}
	}
	// An HTTP failure is read from the body the doer kept (redacted before
	// it is cut: a cut inside the key would leave a prefix that redaction
	// no longer recognises), with the wait the server asked for.
	status := func(code int, body []byte, fallback string) error {
		if len(ra.body) > 0 {
			body = ra.body
		}
		return httpFailure(code, []byte(redact(string(body), c.apiKey)), redact(fallback, c.apiKey), ra.retryAfter, ra.hasRetry)
	}
	var (
		reqErr *openai.RequestError
		apiErr *openai.APIError
		ne     net.Error
	)
	for _, chk := range goOpenAIChecks {
		if errors.Is(err, chk.err) {
			return mk(KindConfig, 0, fmt.Sprintf("the request for model %q was refused before sending by the go-openai client: %v; check %s", model, err, chk.setting), ErrInvalidConfig)
		}
	}
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		msg := err.Error()
		var tl *tooLargeError
		if errors.As(err, &tl) {
			msg = tl.Error()
		}
		return mk(KindResponseTooLarge, 0, msg, ErrResponseTooLarge)
	case errors.As(err, &reqErr):
		fallback := ""
		if errors.As(reqErr.Err, &apiErr) {
			fallback = apiErr.Message
		}
		return status(reqErr.HTTPStatusCode, reqErr.Body, fallback)
	case errors.As(err, &apiErr) && apiErr.HTTPStatusCode > 0:
		return status(apiErr.HTTPStatusCode, nil, apiErr.Message)
	case errors.Is(err, context.Canceled) && !errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return mk(KindCanceled, 0, "the caller canceled the request", context.Canceled)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return mk(KindTimeout, 0, fmt.Sprintf("no reply within %s", elapsed.Round(time.Millisecond)), context.DeadlineExceeded)
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) {
		return mk(KindTransport, 0, "the response is not a chat completion: "+err.Error(), nil)
	}
	return mk(KindTransport, 0, err.Error(), nil)
}

// guardedDoer is the HTTP layer under go-openai: it puts the dialect's
// fields (and the exact temperature) on the wire, bounds response bodies, and
// keeps a 2xx body for the selector's reply reader.
type guardedDoer struct {
	client *http.Client
	limit  int64
}

// overlayKey holds a *bodyOverlay in a request's context.
type overlayKey struct{}

// bodyOverlay is what the doer sets on a request body, and where it leaves
// the 2xx response body.
type bodyOverlay struct {
	set  map[string]json.RawMessage
	body []byte
}

// Do sends req with the overlay's fields and returns a size-limited body.
// A 2xx body is read whole (within the limit) into the overlay, and go-openai
// is handed an empty object in its place: the reply is read by readCompletion.
func (d *guardedDoer) Do(req *http.Request) (*http.Response, error) {
	ov, _ := req.Context().Value(overlayKey{}).(*bodyOverlay)
	if ov != nil && req.Body != nil {
		if err := setFields(req, ov.set); err != nil {
			return nil, err
		}
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	failed, _ := req.Context().Value(failedKey{}).(*failedReply)
	if resp.StatusCode >= 400 && failed != nil {
		failed.retryAfter, failed.hasRetry = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	if resp.ContentLength > d.limit {
		resp.Body.Close()
		return nil, &tooLargeError{limit: d.limit, length: resp.ContentLength}
	}
	resp.Body = &limitedBody{rc: resp.Body, left: d.limit, limit: d.limit}
	if resp.StatusCode >= 400 && failed != nil {
		// Kept for the one error-body reader, and handed on to go-openai.
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		failed.body = body
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	if ov != nil && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		ov.body = body
		resp.Body = io.NopCloser(strings.NewReader("{}"))
		resp.ContentLength = 2
		resp.Header.Set("Content-Type", "application/json")
	}
	return resp, nil
}

// setFields rewrites the JSON request body with set's fields: "temperature"
// then holds the configured value exactly (go-openai's float32 field with
// omitempty drops 0 and turns 0.1 into 0.10000000149011612), and no field is
// sent that the overlay does not set (go-openai's temperature is left 0, so
// omitted).
func setFields(req *http.Request, set map[string]json.RawMessage) error {
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("request body is not a JSON object: %w", err)
	}
	for k, v := range set {
		m[k] = v
	}
	body, err = json.Marshal(m)
	if err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	return nil
}

// tooLargeError reports a response body over the limit.
type tooLargeError struct {
	limit, length int64 // length is -1 when not announced
}

func (e *tooLargeError) Error() string {
	if e.length > 0 {
		return fmt.Sprintf("the response body is %d bytes, over the limit of %d (refused unread)", e.length, e.limit)
	}
	return fmt.Sprintf("the response body exceeds the limit of %d bytes", e.limit)
}

// Is makes errors.Is(err, ErrResponseTooLarge) true.
func (e *tooLargeError) Is(target error) bool { return target == ErrResponseTooLarge }

// limitedBody reads at most limit bytes and fails, rather than truncating,
// when the body holds more.
type limitedBody struct {
	rc    io.ReadCloser
	left  int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, &tooLargeError{limit: b.limit, length: -1}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
