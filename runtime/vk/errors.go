package vk

import (
	"errors"

	"vkchat/runtime/backend"
	"vkchat/runtime/vk/vulkan"
)

// deviceError makes a device loss the Vulkan layer reports
// (vulkan.ErrDeviceLost) also backend.ErrDeviceLost, the error the engine
// answers by falling back to the CPU backend; the message is unchanged.
// The backend's entry points pass their errors through it: the Vulkan
// layer knows nothing of backends.
func deviceError(err error) error {
	if err == nil || !errors.Is(err, vulkan.ErrDeviceLost) || errors.Is(err, backend.ErrDeviceLost) {
		return err
	}
	return lostError{err}
}

type lostError struct{ error }

func (e lostError) Unwrap() error        { return e.error }
func (e lostError) Is(target error) bool { return target == backend.ErrDeviceLost }
