package tools

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/tools/images"
)

// readPicture hands a picture to a model that reads images, scaled to its
// limit; to one that does not, one line that says what the file is.
func readPicture(ctx context.Context, env *Env, rel string, data []byte) Result {
	if env.Images == nil {
		return *Errorf("%s is an image (%s, %d bytes); images cannot be shown to the model here", rel, images.Sniff(data), len(data))
	}
	ok, why := env.Images.TakesImages(ctx)
	if !ok {
		return *Errorf("%s is an image (%s, %d bytes); %s", rel, images.Sniff(data), len(data), why)
	}
	img, err := images.Prepare(data, env.Images.ImageLimits())
	if err != nil {
		return *Errorf("%s: %v", rel, err)
	}
	return Result{Output: fmt.Sprintf("%s is an image (%s); it follows as a picture for you to look at.", rel, images.Describe(img)), Image: &img}
}
