package catalog

import "slices"

// ShippedProfiles returns the profiles compiled in from evokore.cue.
func ShippedProfiles() []Profile { return slices.Clone(shippedProfiles) }
