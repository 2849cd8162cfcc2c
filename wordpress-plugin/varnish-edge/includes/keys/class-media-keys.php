<?php
/**
 * Surrogate keys of the attachments a page renders.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Attachments rendered through WordPress (file URLs, image tags, content images, captions) give
 * the page their `e-N` key.
 */
class Media_Keys extends Key_Source {

	/**
	 * Hooks: where WordPress renders an attachment.
	 */
	public function register(): void {
		add_filter( 'wp_get_attachment_url', array( $this, 'on_attachment_url' ), 10, 2 );
		add_filter( 'wp_get_attachment_image_attributes', array( $this, 'on_attachment_image_attributes' ), 10, 2 );
		add_filter( 'wp_content_img_tag', array( $this, 'on_content_img_tag' ), 10, 3 );
		add_filter( 'wp_get_attachment_caption', array( $this, 'on_attachment_caption' ), 10, 2 );
	}

	/**
	 * Records that the page renders an attachment, so that editing it (alt text, caption,
	 * title, description, files) is one purge of its key instead of a search through posts.
	 */
	private function add_attachment( int $attachment_id ): void {
		if ( $attachment_id > 0 && ! is_admin() ) {
			$this->add( array( $this->scheme()->embedded( (int) $attachment_id ) ) );
		}
	}

	/**
	 * Filter `wp_get_attachment_url`: any use of an attachment's file (images, galleries,
	 * featured images, file links, REST media).
	 *
	 * @param string $url     URL.
	 * @param int    $post_id Attachment id.
	 * @return string
	 */
	public function on_attachment_url( mixed $url, mixed $post_id = 0 ): mixed {
		$this->add_attachment( (int) $post_id );
		return $url;
	}

	/**
	 * Filter `wp_get_attachment_image_attributes`: an image tag built from the attachment (its
	 * alt text; galleries, featured images).
	 *
	 * @param array         $attr       Attributes.
	 * @param \WP_Post|null $attachment Attachment.
	 * @return array
	 */
	public function on_attachment_image_attributes( mixed $attr, mixed $attachment = null ): mixed {
		if ( $attachment instanceof \WP_Post ) {
			$this->add_attachment( (int) $attachment->ID );
		}
		return $attr;
	}

	/**
	 * Filter `wp_content_img_tag`: an image in post content with a `wp-image-N` class (its
	 * srcset and sizes come from the attachment's metadata).
	 *
	 * @param string $tag           Image tag.
	 * @param string $context       Context.
	 * @param int    $attachment_id Attachment id.
	 * @return string
	 */
	public function on_content_img_tag( mixed $tag, mixed $context = '', mixed $attachment_id = 0 ): mixed {
		$this->add_attachment( (int) $attachment_id );
		return $tag;
	}

	/**
	 * Filter `wp_get_attachment_caption`: an attachment's caption shown.
	 *
	 * @param string $caption Caption.
	 * @param int    $post_id Attachment id.
	 * @return string
	 */
	public function on_attachment_caption( mixed $caption, mixed $post_id = 0 ): mixed {
		$this->add_attachment( (int) $post_id );
		return $caption;
	}
}
