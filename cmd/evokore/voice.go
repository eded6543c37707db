package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/voice"
)

func newVoice() *cobra.Command {
	var voicesPath string
	cmd := &cobra.Command{
		Use:   "voice",
		Short: "Run the voice sidecar: speak what agents send on ws://127.0.0.1:8888",
		Long: `The voice sidecar turns text that agents and hooks send over a WebSocket
into speech (ElevenLabs or an OpenAI-compatible endpoint) and plays it, one
utterance at a time, so several sessions finishing at once never overlap.

Settings come from the environment (and ./.env): VOICE_SIDECAR_PORT,
VOICE_SIDECAR_HOST, VOICE_SIDECAR_MAX_CONNECTIONS, EVOKORE_TTS_PROVIDER,
ELEVENLABS_API_KEY, EVOKORE_TTS_BASE_URL, EVOKORE_TTS_API_KEY,
EVOKORE_TTS_MODEL, EVOKORE_TTS_VOICE, EVOKORE_STT_ENABLED,
VOICE_SIDECAR_DISABLE_PLAYBACK, VOICE_SIDECAR_ARTIFACT_DIR and more; see
docs/voice.md. It stops on SIGINT or SIGTERM after closing every client.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := slog.New(slog.NewTextHandler(os.Stderr, nil))
			env, ds := config.LoadEnv(".env")
			for _, d := range ds {
				log.Warn(d.String())
			}
			opts, warnings, err := voice.ReadOptions(env, log)
			for _, w := range warnings {
				log.Warn(w)
			}
			if err != nil {
				return &exitError{1, err}
			}
			if voicesPath != "" {
				opts.VoicesPath = voicesPath
			}
			srv, err := voice.NewServer(opts)
			if err != nil {
				return &exitError{1, err}
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			served := make(chan error, 1)
			go func() { served <- srv.ListenAndServe() }()
			select {
			case err := <-served:
				if err != nil {
					return &exitError{1, fmt.Errorf("voice sidecar: %w", err)}
				}
				return nil
			case <-ctx.Done():
			}
			log.Info("shutting down the voice sidecar")
			dctx, cancel := context.WithTimeout(context.Background(), opts.Drain)
			defer cancel()
			if err := srv.Shutdown(dctx); err != nil {
				log.Warn(err.Error())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&voicesPath, "voices", "", "voices.json to read (default $EVOKORE_VOICES_PATH or ./voices.json; absent = the shipped voices)")
	cmd.AddCommand(newVoiceSay())
	return cmd
}

func newVoiceSay() *cobra.Command {
	var persona string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   `say "TEXT"`,
		Short: "Send one utterance to a running voice sidecar",
		Long: `Sends TEXT, with --persona (default $VOICE_SIDECAR_PERSONA), to the sidecar at
ws://$VOICE_SIDECAR_HOST:$VOICE_SIDECAR_PORT and returns once it is delivered.
Exit 1 when no sidecar answers.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, _ := config.LoadEnv(".env")
			if persona == "" {
				persona = strings.TrimSpace(env.Get("VOICE_SIDECAR_PERSONA"))
			}
			text := strings.Join(args, " ")
			if strings.TrimSpace(text) == "" {
				return &exitError{2, errors.New("say: nothing to say")}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := voice.Say(ctx, voice.URL(env), text, persona); err != nil {
				// One sentence with the fix, not the dialer's error chain.
				if de, ok := errors.AsType[*voice.DialError](err); ok {
					err = fmt.Errorf("no voice sidecar answers at %s: start one with 'evokore voice' (VOICE_SIDECAR_HOST and VOICE_SIDECAR_PORT say where it listens)", de.URL)
				}
				return &exitError{1, err}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&persona, "persona", "", "persona from voices.json (default $VOICE_SIDECAR_PERSONA)")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "give up after this long")
	return cmd
}
