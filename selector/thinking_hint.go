package selector

import (
	"fmt"
	"net/url"
	"strings"
)

// thinkingHint says how to turn thinking off for the attempt's dialect d
// and model: where no switch was sent, the exact provider value that sends
// one.
func thinkingHint(cfg Config, d dialect, model string) string {
	if cfg.reasoning() != ReasoningOff {
		return fmt.Sprintf("set %s=off to turn thinking off", envOf("reasoning"))
	}
	off := fmt.Sprintf("thinking was asked to be off (%s=off)", envOf("reasoning"))
	if d.thinking != nil {
		hint := fmt.Sprintf("%s and the %s dialect sent its switch, but the model thought anyway: raise %s, or pick a model that can stop thinking",
			off, d.name, envOf("max_tokens"))
		if fam, name, ok := modelFamily(model); ok && cfg.provider() == ProviderAuto && fam == Provider(d.name) && detectProvider(cfg.BaseURL, "") == ProviderGeneric {
			hint += fmt.Sprintf("; the switch is %s's own, chosen by the model's name: if the server is not %s's API, set %s to the server it runs on (%s)",
				name, name, envOf("provider"), strings.Join(names(servers), ", "))
		}
		return hint
	}
	return fmt.Sprintf("%s but no thinking switch was sent (the %s dialect has none): %s", off, d.name, providerAdvice(cfg, model))
}

// servers are the providers that are servers a model runs on, whatever the model.
var servers = []Provider{ProviderVLLM, ProviderLlamaCpp, ProviderOllama, ProviderLMStudio}

// providerAdvice names the exact LLM_COMMON_TOOL_SELECTION_PROVIDER value
// that sends model a thinking switch: its family's provider, or the
// provider a shared port's default names, or the values to choose from.
func providerAdvice(cfg Config, model string) string {
	if p, name, ok := modelFamily(model); ok {
		if p == providerGPTOSS {
			return fmt.Sprintf("set %s=auto: %s models are recognised by their name", envOf("provider"), name)
		}
		return fmt.Sprintf("set %s=%s (the model is %s's), or to the server it runs on (%s)",
			envOf("provider"), p, name, strings.Join(names(servers), ", "))
	}
	if u, err := url.Parse(cfg.BaseURL); err == nil && isLocalHost(strings.ToLower(u.Hostname())) {
		switch u.Port() {
		case "8000":
			return fmt.Sprintf("set %s=vllm if this is vLLM (port 8000 is its default), or to the server it runs on (%s)",
				envOf("provider"), strings.Join(names(servers), ", "))
		case "8080":
			return fmt.Sprintf("set %s=llamacpp if this is llama.cpp's server (port 8080 is its default), or to the server it runs on (%s)",
				envOf("provider"), strings.Join(names(servers), ", "))
		}
	}
	var withSwitch []Provider
	for _, p := range providers {
		c := Config{Settings: Settings{Provider: p}}
		if p != ProviderAuto && dialectFor(&c, model).thinking != nil {
			withSwitch = append(withSwitch, p)
		}
	}
	return fmt.Sprintf("set %s to the server's provider, one of %s", envOf("provider"), strings.Join(names(withSwitch), ", "))
}
