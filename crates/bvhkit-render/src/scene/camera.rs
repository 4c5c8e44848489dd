use glam::{DVec2, DVec3};

/// A perspective camera orbiting a target point, Y up, right-handed.
///
/// The eye sits at `distance` from `target`, turned `azimuth` degrees about
/// +Y (0 looks from +Z towards -Z, 90 looks from +X towards -X) and raised
/// `elevation` degrees above the horizontal plane.
/// Pixels have their origin at the top-left corner of the viewport, x to the
/// right and y downwards.
///
/// Every field may hold any value: out-of-range values (a zero viewport, a
/// non-positive distance, NaN) make [`Camera::project`] return `None`
/// instead of panicking.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The point the camera looks at and orbits around, in world units.
    pub target: DVec3,
    /// Turn about +Y, in degrees.
    pub azimuth: f64,
    /// Angle above the horizontal plane, in degrees; kept within ±89 by
    /// [`Camera::orbit`].
    pub elevation: f64,
    /// Distance from the eye to `target`, in world units.
    pub distance: f64,
    /// Vertical field of view, in degrees.
    pub fov_y: f64,
    /// Viewport width in pixels.
    pub width: u32,
    /// Viewport height in pixels.
    pub height: u32,
}

/// The fraction of the viewport left free on each side by [`Camera::framing`].
pub const FRAMING_MARGIN: f64 = 0.08;

/// Default vertical field of view of [`Camera::framing`], in degrees.
pub const DEFAULT_FOV_Y: f64 = 35.0;

impl Camera {
    /// A camera looking at the whole box `bounds_min..=bounds_max` from the
    /// given direction (degrees), as close as possible while every corner of
    /// the box stays inside the viewport with a [`FRAMING_MARGIN`] border.
    ///
    /// Pass the bounding box over all frames of a motion so that nothing
    /// leaves the picture while it plays. A degenerate box (a point, or a
    /// non-finite one) is framed as a unit-sized box around its centre.
    ///
    /// # Example
    /// ```
    /// use bvhkit_render::{Camera, glam::DVec3};
    /// let cam = Camera::framing(DVec3::ZERO, DVec3::new(1.0, 2.0, 1.0), 30.0, 15.0, 640, 480);
    /// let (x, y, _depth) = cam.project(DVec3::new(0.5, 1.0, 0.5)).unwrap();
    /// assert!((x - 320.0).abs() < 1e-9 && (y - 240.0).abs() < 1e-9);
    /// ```
    #[must_use]
    pub fn framing(
        bounds_min: DVec3,
        bounds_max: DVec3,
        azimuth: f64,
        elevation: f64,
        width: u32,
        height: u32,
    ) -> Camera {
        let (mut lo, mut hi) = (bounds_min, bounds_max);
        if !(lo.is_finite() && hi.is_finite()) {
            (lo, hi) = (DVec3::ZERO, DVec3::ZERO);
        }
        let center = (lo + hi) * 0.5;
        let mut half = (hi - lo).abs() * 0.5;
        if half.max_element() <= 1e-9 {
            half = DVec3::splat(0.5);
        }
        let mut cam = Camera {
            target: center,
            azimuth,
            elevation: elevation.clamp(-89.0, 89.0),
            distance: 1.0,
            fov_y: DEFAULT_FOV_Y,
            width,
            height,
        };
        let (right, up, forward) = cam.basis();
        let focal = cam.focal_px();
        let avail_x = f64::from(width.max(1)) * 0.5 * (1.0 - 2.0 * FRAMING_MARGIN);
        let avail_y = f64::from(height.max(1)) * 0.5 * (1.0 - 2.0 * FRAMING_MARGIN);
        // With the eye at target - D * forward a corner c is at depth
        // D + (c - target).forward, so it fits when
        // D >= focal * |(c - target).right| / avail_x - (c - target).forward.
        let mut dist = half.length() * 1e-3;
        for i in 0..8 {
            let sign = DVec3::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { -1.0 } else { 1.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            );
            let c = sign * half;
            let (x, y, z) = (c.dot(right), c.dot(up), c.dot(forward));
            dist = dist.max(focal * x.abs() / avail_x - z).max(focal * y.abs() / avail_y - z);
            // Stay clear of the near plane for every corner.
            dist = dist.max(half.length() * 1e-3 - z);
        }
        cam.distance = dist;
        cam
    }

    /// The eye position in world units.
    #[must_use]
    pub fn eye(&self) -> DVec3 {
        let (_, _, forward) = self.basis();
        self.target - forward * self.distance
    }

    /// The camera's `(right, up, forward)` unit vectors in world space;
    /// `forward` points from the eye to the target.
    #[must_use]
    pub fn basis(&self) -> (DVec3, DVec3, DVec3) {
        let (az, el) = (self.azimuth.to_radians(), self.elevation.to_radians());
        // Direction from the target to the eye.
        let back = DVec3::new(el.cos() * az.sin(), el.sin(), el.cos() * az.cos());
        let forward = -back;
        let right = DVec3::new(az.cos(), 0.0, -az.sin());
        let up = right.cross(forward);
        (right, up, forward)
    }

    /// Focal length in pixels: how many pixels one world unit covers at
    /// depth one.
    #[must_use]
    pub fn focal_px(&self) -> f64 {
        f64::from(self.height.max(1)) * 0.5 / (self.fov_y.to_radians() * 0.5).tan()
    }

    /// Projects a world point to `(x, y, depth)`: pixel coordinates (origin
    /// top-left, y down) and the distance in front of the eye along the view
    /// direction, in world units.
    ///
    /// Returns `None` for a point behind (or almost on) the eye plane, and
    /// for non-finite input. Points outside the viewport but in front of the
    /// camera are still projected.
    #[must_use]
    pub fn project(&self, p: DVec3) -> Option<(f64, f64, f64)> {
        Projector::new(self).project(p)
    }

    /// Size in pixels of one world unit seen at `depth`.
    #[must_use]
    pub fn pixels_per_unit(&self, depth: f64) -> f64 {
        self.focal_px() / depth
    }

    /// Turns the camera around its target by the given angles in degrees,
    /// keeping the elevation within ±89 degrees. A player maps a horizontal
    /// mouse drag to `d_azimuth` and a vertical one to `d_elevation`.
    pub fn orbit(&mut self, d_azimuth: f64, d_elevation: f64) {
        self.azimuth = (self.azimuth + d_azimuth).rem_euclid(360.0);
        self.elevation = (self.elevation + d_elevation).clamp(-89.0, 89.0);
    }

    /// Moves the target (and so the eye) in the view plane so that what was
    /// under the mouse follows a drag of `(dx, dy)` pixels (y down).
    pub fn pan(&mut self, dx: f64, dy: f64) {
        let (right, up, _) = self.basis();
        let units_per_px = self.distance / self.focal_px();
        self.target += (-dx * right + dy * up) * units_per_px;
    }

    /// Moves the eye towards the target (`factor < 1`) or away from it
    /// (`factor > 1`). Non-positive or non-finite factors are ignored.
    pub fn zoom(&mut self, factor: f64) {
        if factor.is_finite() && factor > 0.0 {
            self.distance = (self.distance * factor).max(1e-6);
        }
    }

    /// Sets the viewport size in pixels (after a window resize).
    pub fn set_viewport(&mut self, width: u32, height: u32) {
        self.width = width;
        self.height = height;
    }
}

/// A camera with its basis precomputed, for projecting many points.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Projector {
    eye: DVec3,
    right: DVec3,
    up: DVec3,
    forward: DVec3,
    focal: f64,
    center: DVec2,
    near: f64,
}

impl Projector {
    pub(crate) fn new(cam: &Camera) -> Projector {
        let (right, up, forward) = cam.basis();
        Projector {
            eye: cam.target - forward * cam.distance,
            right,
            up,
            forward,
            focal: cam.focal_px(),
            center: DVec2::new(f64::from(cam.width), f64::from(cam.height)) * 0.5,
            near: (cam.distance * 1e-4).max(1e-9),
        }
    }

    /// Depth of a point along the view direction.
    pub(crate) fn depth(&self, p: DVec3) -> f64 {
        (p - self.eye).dot(self.forward)
    }

    pub(crate) fn focal(&self) -> f64 {
        self.focal
    }

    pub(crate) fn project(&self, p: DVec3) -> Option<(f64, f64, f64)> {
        let d = p - self.eye;
        let z = d.dot(self.forward);
        if z.is_nan() || z <= self.near || !z.is_finite() || !self.focal.is_finite() {
            return None;
        }
        let s = self.focal / z;
        let x = self.center.x + d.dot(self.right) * s;
        let y = self.center.y - d.dot(self.up) * s;
        (x.is_finite() && y.is_finite()).then_some((x, y, z))
    }

    /// Projects the segment `a..b`, clipped against the near plane.
    pub(crate) fn project_segment(&self, a: DVec3, b: DVec3) -> Option<[(f64, f64, f64); 2]> {
        let (za, zb) = (self.depth(a), self.depth(b));
        let near = self.near * 2.0;
        if !(za.is_finite() && zb.is_finite()) || (za < near && zb < near) {
            return None;
        }
        let (mut a, mut b) = (a, b);
        if za < near {
            a = b + (a - b) * ((zb - near) / (zb - za));
        } else if zb < near {
            b = a + (b - a) * ((za - near) / (za - zb));
        }
        Some([self.project(a)?, self.project(b)?])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cam() -> Camera {
        Camera::framing(
            DVec3::new(-1.0, 0.0, -1.0),
            DVec3::new(1.0, 2.0, 1.0),
            35.0,
            20.0,
            160,
            120,
        )
    }

    #[test]
    fn target_projects_to_centre() {
        for (az, el) in [(0.0, 0.0), (35.0, 20.0), (-120.0, 60.0), (270.0, -30.0)] {
            let mut c = cam();
            c.azimuth = az;
            c.elevation = el;
            let (x, y, d) = c.project(c.target).unwrap();
            assert!((x - 80.0).abs() < 1e-9 && (y - 60.0).abs() < 1e-9, "{az} {el}: {x} {y}");
            assert!((d - c.distance).abs() < 1e-9);
        }
    }

    #[test]
    fn framing_keeps_every_corner_inside() {
        let boxes = [
            (DVec3::new(-1.0, 0.0, -1.0), DVec3::new(1.0, 2.0, 1.0)),
            (DVec3::new(-50.0, 0.0, -3.0), DVec3::new(400.0, 170.0, 9.0)),
            (DVec3::new(5.0, 5.0, 5.0), DVec3::new(5.0, 5.0, 5.0)),
            (DVec3::new(0.0, -10.0, -500.0), DVec3::new(1.0, 10.0, 500.0)),
        ];
        for (lo, hi) in boxes {
            for (az, el) in [(0.0, 0.0), (35.0, 20.0), (90.0, 80.0), (200.0, -45.0)] {
                for (w, h) in [(160, 120), (64, 480), (1000, 10)] {
                    let c = Camera::framing(lo, hi, az, el, w, h);
                    for i in 0..8 {
                        let p = DVec3::new(
                            if i & 1 == 0 { lo.x } else { hi.x },
                            if i & 2 == 0 { lo.y } else { hi.y },
                            if i & 4 == 0 { lo.z } else { hi.z },
                        );
                        let (x, y, d) = c.project(p).unwrap();
                        assert!(d > 0.0);
                        let (w, h) = (f64::from(w), f64::from(h));
                        assert!((-1e-6..=w + 1e-6).contains(&x), "{lo} {hi} {az} {el}: x={x}");
                        assert!((-1e-6..=h + 1e-6).contains(&y), "{lo} {hi} {az} {el}: y={y}");
                    }
                }
            }
        }
    }

    #[test]
    fn framing_is_tight_on_some_side() {
        let c = cam();
        let mut max_frac = 0.0f64;
        for i in 0..8 {
            let p = DVec3::new(
                if i & 1 == 0 { -1.0 } else { 1.0 },
                if i & 2 == 0 { 0.0 } else { 2.0 },
                if i & 4 == 0 { -1.0 } else { 1.0 },
            );
            let (x, y, _) = c.project(p).unwrap();
            max_frac = max_frac.max(((x - 80.0) / 80.0).abs()).max(((y - 60.0) / 60.0).abs());
        }
        assert!((max_frac - (1.0 - 2.0 * FRAMING_MARGIN)).abs() < 1e-6, "{max_frac}");
    }

    #[test]
    fn higher_points_are_higher_on_screen() {
        for (az, el) in [(0.0, 0.0), (35.0, 20.0), (180.0, 60.0), (300.0, -60.0)] {
            let mut c = cam();
            c.azimuth = az;
            c.elevation = el;
            let (_, y_low, _) = c.project(c.target).unwrap();
            let (_, y_high, _) = c.project(c.target + DVec3::Y * 0.5).unwrap();
            assert!(y_high < y_low, "{az} {el}");
        }
    }

    #[test]
    fn right_handed_front_view() {
        // From the default front (azimuth 0), +X is to the right and +Z is nearer.
        let mut c = cam();
        c.azimuth = 0.0;
        c.elevation = 0.0;
        let (x0, _, d0) = c.project(c.target).unwrap();
        let (x1, _, _) = c.project(c.target + DVec3::X).unwrap();
        let (_, _, d2) = c.project(c.target + DVec3::Z).unwrap();
        assert!(x1 > x0);
        assert!(d2 < d0);
    }

    #[test]
    fn behind_and_nan_are_none() {
        let c = cam();
        assert!(c.project(c.eye() - c.basis().2).is_none());
        assert!(c.project(DVec3::NAN).is_none());
        let zero = Camera { width: 0, height: 0, distance: 0.0, ..c };
        assert!(zero.project(c.target).is_none());
    }

    #[test]
    fn orbit_pan_zoom() {
        let mut c = cam();
        c.orbit(10.0, 100.0);
        assert_eq!(c.elevation, 89.0);
        let before = c;
        c.pan(10.0, 0.0);
        // The old target moved 10 px to the right on screen.
        let (x, y, _) = c.project(before.target).unwrap();
        assert!((x - 90.0).abs() < 1e-6 && (y - 60.0).abs() < 1e-6, "{x} {y}");
        c.zoom(0.5);
        assert!((c.distance - before.distance * 0.5).abs() < 1e-9);
        c.zoom(-1.0);
        c.zoom(f64::NAN);
        assert!((c.distance - before.distance * 0.5).abs() < 1e-9);
    }
}
